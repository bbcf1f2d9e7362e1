package romm

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// echoModes are failure modes of a server that echoes s(r) — the Authorization header, or a
// secret from the request body — wherever it can.
func echoModes(other string, s func(r *http.Request) string) map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		"400 detail": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 400, map[string]any{"detail": "bad " + s(r)})
		},
		"401 detail": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 401, map[string]any{"detail": "bad token " + s(r)})
		},
		"403 detail": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 403, map[string]any{"detail": "no scope for " + s(r)})
		},
		"404 detail": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 404, map[string]any{"detail": "Device " + s(r) + " not found for this user"})
		},
		"422 list detail": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 422, map[string]any{"detail": []map[string]any{{"msg": s(r), "input": s(r)}}})
		},
		"429 detail": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 429, map[string]any{"detail": s(r)})
		},
		"500 detail": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 500, map[string]any{"detail": "Traceback: " + s(r)})
		},
		"html": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<html>"+s(r)+"</html>")
		},
		"bad json": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"results": [`+s(r))
		},
		"wrong types": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, 201, map[string]any{"device_id": []any{s(r)}, "results": []any{map[string]any{"index": s(r), "status": s(r)}},
				"id": s(r), "user_code": s(r), "device_code": 1})
		},
		"cross-host redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other+"/"+s(r)+"?t="+s(r), http.StatusTemporaryRedirect)
		},
		"method-changing redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/x/"+s(r), http.StatusFound)
		},
		"too large": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"x":"`+s(r))
			_, _ = io.WriteString(w, tooLargePad())
			_, _ = io.WriteString(w, `"}`)
		},
		"hang up": func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 10000\r\n\r\n"+s(r))
				conn.Close()
			}
		},
	}
}

// tooLargePad is the body of "too large", made once: every echo test sends it.
var tooLargePad = sync.OnceValue(func() string { return strings.Repeat("a", maxJSON) })

func bearer(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

func checkNoSecret(t *testing.T, err error, result string, secrets ...string) {
	t.Helper()
	for _, s := range append(errorChain(err), result) {
		for _, x := range secrets {
			if strings.Contains(s, x) || len(x) > 20 && strings.Contains(s, x[4:20]) {
				t.Fatalf("text carries a secret: %q", s)
			}
		}
	}
}

// TestTokenNeverInWriteErrors is TestTokenNeverInErrors for the authenticated writes.
func TestTokenNeverInWriteErrors(t *testing.T) {
	cabinettest.Long(t, "every write call against every echoing answer, some of 16 MiB (TestTokenNeverInErrors stays in -short)")
	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	t0 := time.Date(2026, 6, 1, 20, 0, 0, 0, time.UTC)
	calls := map[string]struct {
		path string
		call func(c *Client) (string, error)
	}{
		"RegisterDevice": {"/api/devices", func(c *Client) (string, error) {
			id, err := c.RegisterDevice(context.Background(), DeviceInfo{MAC: "b8:27:eb:12:34:ab"})
			return id, err
		}},
		"Heartbeat": {"/api/activity/heartbeat", func(c *Client) (string, error) {
			return "", c.Heartbeat(context.Background(), 7, testDeviceID)
		}},
		"ClearHeartbeat": {"/api/activity/heartbeat", func(c *Client) (string, error) {
			return "", c.ClearHeartbeat(context.Background(), testDeviceID)
		}},
		"PostPlaySessions": {"/api/play-sessions", func(c *Client) (string, error) {
			r, err := c.PostPlaySessions(context.Background(), testDeviceID, []PlaySession{{ROMID: 1, Start: t0, End: t0.Add(time.Hour)}})
			return fmt.Sprintf("%+v", r), err
		}},
		"ROMByHash": {"/api/roms/by-hash", func(c *Client) (string, error) {
			r, err := c.ROMByHash(context.Background(), "abcdef01", "", "")
			return fmt.Sprintf("%+v", r), err
		}},
	}
	for mode, h := range echoModes(other.URL, bearer) {
		for name, call := range calls {
			t.Run(mode+"/"+name, func(t *testing.T) {
				f, srv := newFake(t, "5.3.1")
				f.route(call.path, h)
				result, err := call.call(newClient(t, srv.URL))
				if err == nil && mode != "wrong types" {
					t.Fatalf("no error from %q", mode)
				}
				checkNoSecret(t, err, result, testToken)
			})
		}
	}
}

// TestSecretsNeverInSignInErrors: the sign-in routes carry no token of the client's, but a device
// code, a pair code, or the new token in their answer; none of them may reach an error.
func TestSecretsNeverInSignInErrors(t *testing.T) {
	cabinettest.Long(t, "every sign-in call against every echoing answer (TestTokenNeverInErrors stays in -short)")
	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	// The echo is whatever the request body held (the device code or the pair code) plus the new token.
	echo := func(r *http.Request) string {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<10))
		return strings.NewReplacer(`"`, "", "{", "", "}", "").Replace(string(b)) + " " + newToken
	}
	modes := echoModes(other.URL, echo)
	// Answers that look like success but break in decoding, with the new token in them.
	for name, body := range map[string]string{
		"token then syntax error":  `{"access_token":"` + newToken + `","raw_token":"` + newToken + `","scopes":[` + newToken,
		"token unquoted":           `{"access_token":` + newToken + `,"raw_token":` + newToken + `}`,
		"token as a scope":         `{"access_token":"` + newToken + `","raw_token":"` + newToken + `","scopes":"` + newToken + `"}`,
		"token as the device id":   `{"access_token":"` + newToken + `","raw_token":"` + newToken + `","device_id":{"x":"` + newToken + `"}}`,
		"token as the expiry":      `{"access_token":"` + newToken + `","raw_token":"` + newToken + `","expires_at":"` + newToken + `"}`,
		"token as a number expiry": `{"access_token":"` + newToken + `","raw_token":"` + newToken + `","expires_at":1` + newToken[4:] + `}`,
		"token with a space":       `{"access_token":"` + newToken + ` x","raw_token":"` + newToken + ` x"}`,
		"token too long":           `{"access_token":"` + strings.Repeat(newToken, 20) + `","raw_token":"` + strings.Repeat(newToken, 20) + `"}`,
		"token in the user code":   `{"device_code":"` + testDeviceCode + `","user_code":"` + newToken + `","verification_path_complete":"/pair/device?t=` + newToken + `","expires_in":600}`,
		"token in the path":        `{"device_code":"` + testDeviceCode + `","user_code":"ABCD2345","verification_path_complete":"https://` + newToken + `.example/","expires_in":600}`,
	} {
		modes[name] = func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, body)
		}
	}
	calls := map[string]struct {
		path string
		call func(c *Client) (string, error)
	}{
		"DeviceInit": {"/api/auth/device/init", func(c *Client) (string, error) {
			d, err := c.DeviceInit(context.Background(), initRequest())
			return fmt.Sprintf("%+v %s", d, d.VerificationURL), err
		}},
		"DeviceToken": {"/api/auth/device/token", func(c *Client) (string, error) {
			tok, err := c.DeviceToken(context.Background(), testDeviceCode)
			return fmt.Sprintf("%+v %s", tok, tok.Token), err
		}},
		"ExchangePairCode": {"/api/client-tokens/exchange", func(c *Client) (string, error) {
			tok, err := c.ExchangePairCode(context.Background(), "ABCD-2345")
			return fmt.Sprintf("%+v %s", tok, tok.Token), err
		}},
	}
	for mode, h := range modes {
		for name, call := range calls {
			t.Run(mode+"/"+name, func(t *testing.T) {
				f, srv := newFake(t, "5.3.1")
				f.token = ""
				f.route(call.path, h)
				c := newClient(t, srv.URL, func(c *Config) { c.Token = "" })
				result, err := call.call(c)
				if err == nil {
					t.Fatalf("no error from %q: %s", mode, result)
				}
				checkNoSecret(t, err, result, newToken, testDeviceCode, "ABCD2345")
			})
		}
	}
}
