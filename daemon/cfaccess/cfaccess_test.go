package cfaccess

import (
	"cmp"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestVerify(t *testing.T) {
	allow := func(list ...string) func(*Options) {
		return func(o *Options) { o.AllowedEmails = list }
	}
	set := func(k string, v any) func(jwt.MapClaims) {
		return func(c jwt.MapClaims) { c[k] = v }
	}
	serviceToken := func(c jwt.MapClaims) {
		delete(c, "email")
		c["common_name"] = "9f1c2a.access"
		c["sub"] = ""
	}
	in := func(d time.Duration) int64 { return start.Add(d).Unix() }
	pubDER := func() []byte {
		der, err := x509.MarshalPKIXPublicKey(&testKeys()[0].PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k1, stranger := key(0, "k1"), key(3, "k1") // stranger reuses k1's kid

	tests := []struct {
		name        string
		opts        func(*Options)
		assertion   func(r *rig) string
		want        Reason // "" for accepted
		wantEmail   string
		wantSubject string
		wantHits    int64         // GETs of the certs URL; -1 to not check
		wantExpires time.Duration // from start; 0 for the default hour
	}{
		{name: "valid", assertion: func(r *rig) string { return r.sign(k1, nil) },
			wantEmail: "alice@example.com", wantSubject: "7335d417-61da-459d-899c-0a01c76a2f94", wantHits: 1},
		{name: "expired within leeway", assertion: func(r *rig) string { return r.sign(k1, set("exp", in(-20*time.Second))) },
			wantEmail: "alice@example.com", wantSubject: "7335d417-61da-459d-899c-0a01c76a2f94", wantHits: 1, wantExpires: -20 * time.Second},
		{name: "expired", assertion: func(r *rig) string { return r.sign(k1, set("exp", in(-time.Minute))) }, want: ReasonExpired},
		{name: "no exp", assertion: func(r *rig) string {
			return r.sign(k1, func(c jwt.MapClaims) { delete(c, "exp") })
		}, want: ReasonMalformed},
		{name: "nbf beyond leeway", assertion: func(r *rig) string { return r.sign(k1, set("nbf", in(time.Minute))) }, want: ReasonNotYetValid},
		{name: "iat beyond leeway", assertion: func(r *rig) string { return r.sign(k1, set("iat", in(time.Minute))) }, want: ReasonNotYetValid},
		{name: "wrong audience", assertion: func(r *rig) string { return r.sign(k1, set("aud", []string{strings.Repeat("ab", 32)})) }, want: ReasonAudience},
		{name: "audience as a string", assertion: func(r *rig) string { return r.sign(k1, set("aud", audience)) },
			wantEmail: "alice@example.com", wantSubject: "7335d417-61da-459d-899c-0a01c76a2f94", wantHits: 1},
		{name: "wrong issuer", assertion: func(r *rig) string { return r.sign(k1, set("iss", "https://evil.cloudflareaccess.com")) }, want: ReasonIssuer},
		{name: "issuer over http", assertion: func(r *rig) string { return r.sign(k1, set("iss", "http://"+team)) }, want: ReasonIssuer},
		{name: "alg none", assertion: func(r *rig) string {
			return signWith(t, jwt.SigningMethodNone, "k1", jwt.UnsafeAllowNoneSignatureType, r.claims(), nil)
		}, want: ReasonAlgorithm},
		{name: "HS256 keyed with the public key PEM", assertion: func(r *rig) string {
			secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER()})
			return signWith(t, jwt.SigningMethodHS256, "k1", secret, r.claims(), nil)
		}, want: ReasonAlgorithm},
		{name: "HS256 keyed with the public key DER", assertion: func(r *rig) string {
			return signWith(t, jwt.SigningMethodHS256, "k1", pubDER(), r.claims(), nil)
		}, want: ReasonAlgorithm},
		{name: "RS384", assertion: func(r *rig) string {
			return signWith(t, jwt.SigningMethodRS384, "k1", k1.priv, r.claims(), nil)
		}, want: ReasonAlgorithm},
		{name: "PS256", assertion: func(r *rig) string {
			return signWith(t, jwt.SigningMethodPS256, "k1", k1.priv, r.claims(), nil)
		}, want: ReasonAlgorithm},
		{name: "ES256", assertion: func(r *rig) string {
			return signWith(t, jwt.SigningMethodES256, "k1", ecKey, r.claims(), nil)
		}, want: ReasonAlgorithm},
		{name: "missing", assertion: func(*rig) string { return "" }, want: ReasonMissing},
		{name: "garbage", assertion: func(*rig) string { return "not a jwt" }, want: ReasonMalformed},
		{name: "three parts of garbage", assertion: func(*rig) string { return "aaaa.bbbb.cccc" }, want: ReasonMalformed},
		{name: "line break in the signature", assertion: func(r *rig) string {
			s := r.sign(k1, nil)
			return s[:len(s)-10] + "\n" + s[len(s)-10:]
		}, want: ReasonMalformed},
		{name: "oversized", assertion: func(r *rig) string { return r.sign(k1, set("pad", strings.Repeat("x", MaxAssertionBytes))) }, want: ReasonTooLarge},
		{name: "no kid", assertion: func(r *rig) string {
			return signWith(t, jwt.SigningMethodRS256, "", k1.priv, r.claims(), nil)
		}, want: ReasonUnknownKey},
		{name: "unknown kid", assertion: func(r *rig) string { return r.sign(key(1, "k9"), nil) }, want: ReasonUnknownKey, wantHits: 1},
		{name: "signed by another key", assertion: func(r *rig) string { return r.sign(stranger, nil) }, want: ReasonSignature, wantHits: 1},
		{name: "claims swapped under a real signature", assertion: func(r *rig) string {
			genuine := strings.Split(r.sign(k1, nil), ".")
			forged := strings.Split(r.sign(stranger, set("email", "mallory@example.com")), ".")
			return genuine[0] + "." + forged[1] + "." + genuine[2]
		}, want: ReasonSignature, wantHits: 1},
		{name: "e-mail outside the list", opts: allow("bob@example.com"),
			assertion: func(r *rig) string { return r.sign(k1, nil) }, want: ReasonEmail},
		{name: "e-mail in the list, other case", opts: allow(" Alice@Example.COM "),
			assertion: func(r *rig) string { return r.sign(k1, nil) },
			wantEmail: "alice@example.com", wantSubject: "7335d417-61da-459d-899c-0a01c76a2f94", wantHits: 1},
		{name: "domain entry", opts: allow("@EXAMPLE.com"),
			assertion: func(r *rig) string { return r.sign(k1, set("email", "Bob@example.com")) },
			wantEmail: "Bob@example.com", wantSubject: "7335d417-61da-459d-899c-0a01c76a2f94", wantHits: 1},
		{name: "domain entry is not a suffix", opts: allow("@example.com"),
			assertion: func(r *rig) string { return r.sign(k1, set("email", "bob@evil-example.com")) }, want: ReasonEmail},
		{name: "domain entry is not its subdomains", opts: allow("@example.com"),
			assertion: func(r *rig) string { return r.sign(k1, set("email", "bob@mail.example.com")) }, want: ReasonEmail},
		{name: "service token, no list", assertion: func(r *rig) string { return r.sign(k1, serviceToken) },
			wantSubject: "9f1c2a.access", wantHits: 1},
		{name: "service token, list set", opts: allow("@example.com"),
			assertion: func(r *rig) string { return r.sign(k1, serviceToken) }, want: ReasonNoEmail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.opts)
			assertion := tt.assertion(r)
			id, err := r.verify(assertion)
			if got := ReasonOf(err); got != tt.want {
				t.Fatalf("reason %q (%v), want %q", got, err, tt.want)
			}
			if hits := r.certs.hits.Load(); tt.wantHits >= 0 && hits != tt.wantHits {
				t.Errorf("certs fetched %d times, want %d", hits, tt.wantHits)
			}
			st := r.v.Stats()
			if tt.want != "" {
				if st.Refused[tt.want] != 1 || st.Accepted != 0 {
					t.Errorf("stats refused[%q] = %d, accepted %d; want 1, 0", tt.want, st.Refused[tt.want], st.Accepted)
				}
				checkSafe(t, err, assertion)
				return
			}
			expires := start.Add(cmp.Or(tt.wantExpires, time.Hour))
			if id.Email != tt.wantEmail || id.Subject != tt.wantSubject || !id.Expires.Equal(expires) {
				t.Errorf("identity %+v, want email %q subject %q expires %v", id, tt.wantEmail, tt.wantSubject, expires)
			}
			if st.Accepted != 1 || st.SignatureChecks != 1 {
				t.Errorf("stats accepted %d, signature checks %d; want 1, 1", st.Accepted, st.SignatureChecks)
			}
		})
	}
}

// checkSafe checks that a refusal gives away nothing of the assertion: the
// log text holds none of its parts, the client's text not even an address.
func checkSafe(t *testing.T, err error, assertion string) {
	t.Helper()
	for _, part := range strings.Split(assertion, ".") {
		if len(part) > 8 && strings.Contains(err.Error(), part) {
			t.Errorf("error %q quotes the assertion", err)
		}
	}
	if r := string(ReasonOf(err)); strings.Contains(r, "@") || strings.Contains(r, "example") {
		t.Errorf("reason %q names an identity", r)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		opts    func(*Options)
		wantErr string // "" for accepted
	}{
		{name: "defaults", opts: func(o *Options) { o.CertsURL = "" }},
		{name: "team domain with https and slash", opts: func(o *Options) { o.TeamDomain = " https://MyTeam.cloudflareaccess.com/ " }},
		{name: "no team domain", opts: func(o *Options) { o.TeamDomain = "https://" }, wantErr: "team_domain is required"},
		{name: "team domain over http", opts: func(o *Options) { o.TeamDomain = "http://" + team }, wantErr: "must be https"},
		{name: "team domain with a path", opts: func(o *Options) { o.TeamDomain = team + "/cdn-cgi" }, wantErr: "not a host name"},
		{name: "team domain with a port", opts: func(o *Options) { o.TeamDomain = team + ":8443" }, wantErr: "not a host name"},
		{name: "no audience", opts: func(o *Options) { o.Audience = "" }, wantErr: "64 hex digits"},
		{name: "audience not hex", opts: func(o *Options) { o.Audience = strings.Repeat("z", 64) }, wantErr: "64 hex digits"},
		{name: "audience upper case", opts: func(o *Options) { o.Audience = strings.ToUpper(audience) }},
		{name: "certs over http", opts: func(o *Options) { o.CertsURL = "http://example.com/cdn-cgi/access/certs" }, wantErr: "must be https"},
		{name: "certs over http to a loopback-looking name", opts: func(o *Options) { o.CertsURL = "http://127.0.0.1.example.com/" }, wantErr: "must be https"},
		{name: "certs over ftp", opts: func(o *Options) { o.CertsURL = "ftp://127.0.0.1/" }, wantErr: "must be https"},
		{name: "certs without host", opts: func(o *Options) { o.CertsURL = "https:///certs" }, wantErr: "no host"},
		{name: "certs on 127.0.0.1", opts: func(o *Options) { o.CertsURL = "http://127.0.0.1:8080/certs" }},
		{name: "certs on 127.1.2.3", opts: func(o *Options) { o.CertsURL = "http://127.1.2.3/certs" }},
		{name: "certs on ::1", opts: func(o *Options) { o.CertsURL = "http://[::1]:8080/certs" }},
		{name: "certs on localhost", opts: func(o *Options) { o.CertsURL = "http://localhost:8080/certs" }},
		{name: "certs over https", opts: func(o *Options) { o.CertsURL = "https://example.com/certs" }},
		{name: "e-mail entry without @", opts: func(o *Options) { o.AllowedEmails = []string{"alice"} }, wantErr: "allowed_emails entry"},
		{name: "e-mail entry ending in @", opts: func(o *Options) { o.AllowedEmails = []string{"alice@"} }, wantErr: "allowed_emails entry"},
		{name: "negative leeway", opts: func(o *Options) { o.Leeway = -time.Second }, wantErr: "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{TeamDomain: team, Audience: audience, CertsURL: "http://127.0.0.1:1/certs"}
			tt.opts(&opts)
			_, err := New(opts)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("New: %v, want accepted", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("New: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// A normalised team domain and audience still match Access's claims.
func TestNewNormalises(t *testing.T) {
	r := newRig(t, func(o *Options) {
		o.TeamDomain = "HTTPS://" + strings.ToUpper(team) + "/"
		o.Audience = strings.ToUpper(audience)
	})
	r.mustAccept(r.sign(key(0, "k1"), nil))
}

// A flood of forgeries that pass every cheap check (only the signature is
// wrong) does not stop valid assertions from verifying, and is counted.
func TestFloodOfForgeries(t *testing.T) {
	const forgeries, workers = 10000, 16
	r := newRig(t, nil)
	valid := r.sign(key(0, "k1"), nil)
	forged := r.sign(key(3, "k1"), nil)
	r.mustAccept(valid)

	var wg sync.WaitGroup
	jobs := make(chan struct{})
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range jobs {
				if _, err := r.verify(forged); ReasonOf(err) != ReasonSignature {
					errs <- err
					return
				}
			}
		})
	}
	done := make(chan struct{})
	var accepted int
	var validErr error
	var vg sync.WaitGroup
	vg.Go(func() {
		for {
			select {
			case <-done:
				if accepted >= 100 {
					return
				}
			default:
			}
			if _, err := r.verify(valid); err != nil {
				validErr = err
				return
			}
			accepted++
		}
	})
	for range forgeries {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	close(done)
	vg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("forgery: %v, want refused as %q", err, ReasonSignature)
	}
	if validErr != nil {
		t.Fatalf("valid assertion during the flood: %v", validErr)
	}
	st := r.v.Stats()
	if st.Refused[ReasonSignature] != forgeries || st.Accepted != uint64(accepted)+1 {
		t.Errorf("refused %d, accepted %d; want %d, %d", st.Refused[ReasonSignature], st.Accepted, forgeries, accepted+1)
	}
	// The clock stands still, so the budget never refills: all but the
	// burst found it empty.
	if want := uint64(forgeries - 20); st.BudgetExhausted != want {
		t.Errorf("budget exhausted %d times, want %d", st.BudgetExhausted, want)
	}
	t.Logf("%d valid assertions accepted during %d forgeries", accepted, forgeries)
}
