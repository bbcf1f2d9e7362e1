package romm

import (
	"net/url"
	"strings"
	"testing"
)

func seedTokenAnswers(f *testing.F) {
	for _, s := range []string{"", "null", "{}", "[]", `{"access_token":null}`,
		`{"access_token":"` + newToken + `","device_id":"d","scopes":["roms.read"],"expires_at":null}`,
		`{"access_token":"` + newToken + `","device_id":"d","scopes":["roms.read"],"expires_at":"2026-01-01T00:00:00+00:00"}`,
		`{"raw_token":"` + newToken + `","device_id":null,"scopes":[],"expires_at":"2026-01-01T00:00:00.5"}`,
		`{"access_token":"` + newToken + `","scopes":"` + newToken + `"}`,
		`{"access_token":` + newToken + `}`,
		`{"access_token":"` + newToken + `","expires_at":"` + newToken + `"}`,
		`{"access_token":"` + newToken + `","expires_at":1e999}`,
		`{"raw_token":"` + newToken + `","device_id":"` + newToken + `"}`,
	} {
		f.Add([]byte(s))
	}
}

// checkTokenDecode: a decoded token is usable, its texts bounded; an error never holds the token
// the input carried.
func checkTokenDecode(t *testing.T, body []byte, tok DeviceToken, err error) {
	if err != nil {
		if tok.Token != "" {
			t.Fatalf("error %v with a token", err)
		}
		for _, s := range errorChain(err) {
			if strings.Contains(s, newToken[4:20]) || strings.Contains(s, "rmm_") {
				t.Fatalf("error carries the token: %q", s)
			}
		}
		return
	}
	if tok.Token == "" || checkToken(tok.Token) != nil {
		t.Fatalf("unusable token from %s", body)
	}
	if tok.DeviceID != "" && (!deviceIDOK(tok.DeviceID) || strings.Contains(tok.DeviceID, tok.Token)) {
		t.Fatalf("device id %q", tok.DeviceID)
	}
	if len(tok.Scopes) > maxTokenScopes {
		t.Fatalf("%d scopes", len(tok.Scopes))
	}
	for _, s := range tok.Scopes {
		if !scopeNameOK(s) {
			t.Fatalf("scope %q", s)
		}
	}
	if y := tok.ExpiresAt.Year(); !tok.ExpiresAt.IsZero() && (y < 1970 || y > 9999) {
		t.Fatalf("expiry %v", tok.ExpiresAt)
	}
	if s := tok.String(); strings.Contains(s, tok.Token) {
		t.Fatalf("String shows the token: %s", s)
	}
}

func FuzzDecodeDeviceToken(f *testing.F) {
	seedTokenAnswers(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		tok, err := decodeDeviceToken(body)
		checkTokenDecode(t, body, tok, err)
	})
}

func FuzzDecodeExchange(f *testing.F) {
	seedTokenAnswers(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		tok, err := decodeExchange(body)
		checkTokenDecode(t, body, tok, err)
	})
}

func FuzzDecodeDeviceCode(f *testing.F) {
	for _, s := range []string{"", "{}", `{"device_code":"a","user_code":"B","verification_path_complete":"/pair/device?user_code=B","expires_in":600,"interval":5}`,
		`{"device_code":"a","user_code":"B","verification_path_complete":"//evil/x","expires_in":600}`,
		`{"device_code":"a","user_code":"B","verification_path":"/p/../../x?y=%zz","expires_in":-1,"interval":99999999999}`,
		`{"device_code":"a","user_code":"B","verification_path_complete":"/pair/device?user_code=B&user_code=C#x","expires_in":9223372036854775807}`} {
		f.Add([]byte(s))
	}
	c, err := New(Config{URL: "http://romm.lan:8080/romm", Token: testToken})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := c.decodeDeviceCode(body)
		if err != nil {
			return
		}
		u, perr := url.Parse(d.VerificationURL)
		if perr != nil || u.Scheme != "http" || u.Host != "romm.lan:8080" || !strings.HasPrefix(u.Path, "/romm/") || u.User != nil || u.Fragment != "" {
			t.Fatalf("verification URL %q leaves RomM", d.VerificationURL)
		}
		if u.Query().Get("user_code") != d.UserCode || strings.Contains(d.VerificationURL, d.DeviceCode) || strings.Contains(d.VerificationURL, testToken) {
			t.Fatalf("verification URL %q: user code %q, device code %q", d.VerificationURL, d.UserCode, d.DeviceCode)
		}
		if !deviceCodeOK(d.DeviceCode) || !userCodeOK(d.UserCode) || d.ExpiresIn <= 0 || d.ExpiresIn > maxCodeLifetime || d.Interval < 1e9 || d.Interval > 60e9 {
			t.Fatalf("DeviceCode %#v", d)
		}
	})
}

func FuzzDecodeSessionResults(f *testing.F) {
	for _, s := range []string{"", "{}", `{"results":[]}`, `{"results":[{"index":0,"status":"created","id":1}]}`,
		`{"results":[{"index":2,"status":"error","detail":"\u202ex"},{"index":0,"status":"duplicate"},{"index":1,"status":"created","id":9}]}`,
		`{"results":[{"index":-1,"status":"created"}]}`, `{"results":[{"index":1e30,"status":"created"}]}`} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, body []byte, n uint8) {
		m := int(n % (MaxSessionsPerRequest + 1))
		got, err := decodeSessionResults(body, m)
		if err != nil {
			return
		}
		if len(got) != m {
			t.Fatalf("%d results for %d sessions", len(got), m)
		}
		for i, r := range got {
			if r.Index != i || (r.Status != SessionCreated && r.Status != SessionDuplicate && r.Status != SessionError) || r.ID < 0 {
				t.Fatalf("result %d = %+v", i, r)
			}
			checkLine(t, "detail", r.Detail, capSessionDetail)
		}
	})
}

func FuzzPairCode(f *testing.F) {
	for _, s := range []string{"", "ABCD2345", "abcd-2345", "ABCD 2345", "ABCDI234", "ÀBCD2345", strings.Repeat("-", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := normalizePairCode(s)
		if n == "" {
			return
		}
		if len(n) != pairCodeLength || strings.Trim(n, pairAlphabet) != "" || normalizePairCode(n) != n {
			t.Fatalf("normalizePairCode(%q) = %q", s, n)
		}
	})
}

func FuzzScrubTokens(f *testing.F) {
	for _, s := range []string{"", "rmm_", "x " + newToken + " y", "rmm_rmm_" + newToken, newToken[:11]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := scrubTokens(s)
		if strings.Contains(out, newToken) || strings.Contains(s+"x", "rmm_"+newToken[4:12]) && strings.Contains(out, "rmm_"+newToken[4:12]) {
			t.Fatalf("scrubTokens(%q) = %q", s, out)
		}
	})
}
