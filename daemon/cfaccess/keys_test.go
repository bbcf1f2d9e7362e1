package cfaccess

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestKeyRotation(t *testing.T) {
	r := newRig(t, nil)
	k1, k2, k3 := key(0, "k1"), key(1, "k2"), key(2, "k3")
	r.mustAccept(r.sign(k1, nil))
	r.certs.serveKeys(k2)

	// Within a minute of the first fetch an unknown kid fetches nothing.
	r.mustRefuse(r.sign(k2, nil), ReasonUnknownKey)
	if hits := r.certs.hits.Load(); hits != 1 {
		t.Fatalf("certs fetched %d times within RefetchEvery, want 1", hits)
	}

	r.clk.Advance(time.Minute)
	r.mustAccept(r.sign(k2, nil))
	if hits := r.certs.hits.Load(); hits != 2 {
		t.Fatalf("certs fetched %d times after the rotation, want 2", hits)
	}
	// A second unknown kid within the minute does not refetch; nor does
	// the retired k1, which the new set dropped.
	r.mustRefuse(r.sign(k3, nil), ReasonUnknownKey)
	r.mustRefuse(r.sign(k1, nil), ReasonUnknownKey)
	if hits, st := r.certs.hits.Load(), r.v.Stats(); hits != 2 || st.RefetchesSuppressed != 3 || st.Keys != 1 {
		t.Fatalf("certs fetched %d times, %d refetches suppressed, %d keys; want 2, 3, 1", hits, st.RefetchesSuppressed, st.Keys)
	}
}

// A certs endpoint that fails is reported clearly and the keys held are kept.
func TestFetchFailureKeepsKeys(t *testing.T) {
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		status  int
		body    []byte
		wantErr string
	}{
		{name: "500", status: 500, body: []byte("oops"), wantErr: "status 500, want 200"},
		{name: "oversized", status: 200, body: []byte(`{"keys":[],"pad":"` + strings.Repeat("x", 64<<10) + `"}`), wantErr: "body larger than 65536 bytes"},
		{name: "not JSON", status: 200, body: []byte("<html>login</html>"), wantErr: "not a JWKS"},
		{name: "no keys", status: 200, body: []byte(`{"keys":[]}`), wantErr: "no usable key among 0"},
		{name: "only a 1024-bit key", status: 200, body: jwksOf(signer{kid: "k2", priv: small}), wantErr: "no usable key among 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, nil)
			valid := r.sign(key(0, "k1"), nil)
			r.mustAccept(valid)
			r.certs.serve(tt.status, tt.body)

			err := r.v.Refresh(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Refresh: %v, want an error containing %q", err, tt.wantErr)
			}
			r.mustAccept(valid)
			// An unknown kid's refetch fails the same way; k1 still works.
			r.clk.Advance(time.Minute)
			refusal := r.mustRefuse(r.sign(key(1, "k2"), nil), ReasonUnknownKey)
			if !strings.Contains(refusal.Error(), tt.wantErr) {
				t.Errorf("refusal %q does not say why the refetch failed (%q)", refusal, tt.wantErr)
			}
			r.mustAccept(valid)
			st := r.v.Stats()
			if st.Keys != 1 || st.Fetches != 3 || st.FetchFailures != 2 || !strings.Contains(st.LastFetchError, tt.wantErr) {
				t.Errorf("stats %+v, want 1 key, 3 fetches, 2 failures, last error containing %q", st, tt.wantErr)
			}
		})
	}
}

// With no keys yet a failed fetch is retried after seconds, not a minute.
func TestFirstFetchFails(t *testing.T) {
	r := newRig(t, nil)
	r.certs.serve(http.StatusBadGateway, nil)
	valid := r.sign(key(0, "k1"), nil)
	if err := r.mustRefuse(valid, ReasonKeys); !strings.Contains(err.Error(), "status 502") {
		t.Errorf("refusal %q does not say why the keys are missing", err)
	}
	r.certs.serveKeys(key(0, "k1"))
	r.mustRefuse(valid, ReasonKeys) // within noKeysRetry
	r.clk.Advance(noKeysRetry)
	r.mustAccept(valid)
	if hits := r.certs.hits.Load(); hits != 2 {
		t.Errorf("certs fetched %d times, want 2", hits)
	}
}

// Callers arriving together share the first fetch.
func TestConcurrentCallersShareOneFetch(t *testing.T) {
	r := newRig(t, nil)
	valid := r.sign(key(0, "k1"), nil)
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for range 50 {
		wg.Go(func() {
			if _, err := r.verify(valid); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Verify: %v", err)
	}
	if hits := r.certs.hits.Load(); hits != 1 {
		t.Errorf("certs fetched %d times, want 1", hits)
	}
}

// A caller whose context ends stops waiting for a slow fetch; the fetch
// carries on for the others.
func TestContextEndsWhileFetching(t *testing.T) {
	r := newRig(t, nil)
	release := make(chan struct{})
	r.certs.mu.Lock()
	r.certs.block = release
	r.certs.mu.Unlock()
	valid := r.sign(key(0, "k1"), nil)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.v.Verify(ctx, valid); ReasonOf(err) != ReasonKeys {
		t.Fatalf("Verify with an ended context: %v, want %q", err, ReasonKeys)
	}
	close(release)
	r.mustAccept(valid) // joins the fetch already under way
	if hits := r.certs.hits.Load(); hits != 1 {
		t.Errorf("certs fetched %d times, want 1", hits)
	}
}

// A flood of forgeries that empties the failure budget does not stop a key
// Access rotated in meanwhile from being fetched: RefetchEvery alone bounds
// the fetches, so the real user whose assertion names the new key gets in
// the first time a fetch is allowed, flood or not.
func TestRotationDuringFlood(t *testing.T) {
	r := newRig(t, func(o *Options) { o.FailBurst, o.FailRate = 3, 1 })
	r.mustAccept(r.sign(key(0, "k1"), nil))
	forged := r.sign(key(3, "k1"), nil)
	for range 10 {
		r.mustRefuse(forged, ReasonSignature)
	}
	if !r.v.Flooding() {
		t.Fatal("Flooding() = false after 10 refusals with a burst of 3")
	}
	r.certs.serveKeys(key(0, "k1"), key(1, "k2"))
	r.clk.Advance(time.Minute) // RefetchEvery since the first fetch
	for range 4 {
		r.mustRefuse(forged, ReasonSignature)
	}
	if !r.v.Flooding() {
		t.Fatal("Flooding() = false while forgeries keep coming")
	}
	r.mustAccept(r.sign(key(1, "k2"), nil))
	r.mustAccept(r.sign(key(0, "k1"), nil))
	st := r.v.Stats()
	if st.Fetches != 2 || st.RefetchesSuppressed != 0 || st.BudgetExhausted != 7+1 {
		t.Errorf("stats %+v; want 2 fetches, none suppressed, 8 refusals finding the budget empty", st)
	}
	r.clk.Advance(10 * time.Second)
	if r.v.Flooding() {
		t.Error("Flooding() = true after the budget had time to refill")
	}
}

// A certs URL that redirects to plain http is not followed into trust.
func TestRedirectToHTTPRefused(t *testing.T) {
	target := newCertsServer(t, key(0, "k1"))
	// Loopback is trusted over http, so redirect to a non-loopback name
	// that resolves back to the fake (through the transport's dialer).
	redirector := httptest.NewServer(http.RedirectHandler("http://certs.example/", http.StatusFound))
	t.Cleanup(redirector.Close)
	var dialer net.Dialer
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == "certs.example:80" {
				addr = target.srv.Listener.Addr().String()
			}
			return dialer.DialContext(ctx, network, addr)
		},
	}}
	t.Cleanup(client.CloseIdleConnections)
	r := newRig(t, func(o *Options) { o.CertsURL, o.Client = redirector.URL, client })
	if err := r.v.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "redirected") {
		t.Fatalf("Refresh: %v, want the redirect refused", err)
	}
}

func TestParseJWKS(t *testing.T) {
	pub := testKeys()[0].PublicKey
	n := base64.RawURLEncoding.EncodeToString(pub.N.Bytes())
	doc := func(fields string) []byte { return []byte(`{"keys":[{` + fields + `}]}`) }
	e := func(v int64) string { return base64.RawURLEncoding.EncodeToString(big.NewInt(v).Bytes()) }
	tests := []struct {
		name string
		body []byte
		want int // keys kept; 0 means an error
	}{
		{name: "Access's shape", body: doc(`"kid":"a","kty":"RSA","alg":"RS256","use":"sig","e":"AQAB","n":"` + n + `"`), want: 1},
		{name: "no alg or use", body: doc(`"kid":"a","kty":"RSA","e":"AQAB","n":"` + n + `"`), want: 1},
		{name: "padded", body: doc(`"kid":"a","kty":"RSA","e":"AQAB","n":"` + n + `=="`), want: 1},
		{name: "no kid", body: doc(`"kty":"RSA","e":"AQAB","n":"` + n + `"`)},
		{name: "EC", body: doc(`"kid":"a","kty":"EC","e":"AQAB","n":"` + n + `"`)},
		{name: "encryption key", body: doc(`"kid":"a","kty":"RSA","use":"enc","e":"AQAB","n":"` + n + `"`)},
		{name: "RS512 key", body: doc(`"kid":"a","kty":"RSA","alg":"RS512","e":"AQAB","n":"` + n + `"`)},
		{name: "exponent 1", body: doc(`"kid":"a","kty":"RSA","e":"` + e(1) + `","n":"` + n + `"`)},
		{name: "even exponent", body: doc(`"kid":"a","kty":"RSA","e":"` + e(65536) + `","n":"` + n + `"`)},
		{name: "exponent 2^31+1", body: doc(`"kid":"a","kty":"RSA","e":"` + e(1<<31+1) + `","n":"` + n + `"`)},
		{name: "exponent 3", body: doc(`"kid":"a","kty":"RSA","e":"` + e(3) + `","n":"` + n + `"`), want: 1},
		{name: "modulus not base64", body: doc(`"kid":"a","kty":"RSA","e":"AQAB","n":"!!"`)},
		{name: "modulus of 9000 bits", body: doc(`"kid":"a","kty":"RSA","e":"AQAB","n":"` + base64.RawURLEncoding.EncodeToString(append([]byte{1}, make([]byte, 1125)...)) + `"`)},
		{name: "one good, one odd", body: []byte(`{"keys":[{"kid":"a","kty":"oct"},{"kid":"b","kty":"RSA","e":"AQAB","n":"` + n + `"}]}`), want: 1},
		{name: "keys not a list", body: []byte(`{"keys":{}}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, err := parseJWKS(tt.body)
			if got := len(keys); got != tt.want || (err == nil) != (tt.want > 0) {
				t.Fatalf("parseJWKS: %d keys, %v; want %d", got, err, tt.want)
			}
		})
	}
}

func TestStatsListEveryReason(t *testing.T) {
	r := newRig(t, nil)
	st := r.v.Stats()
	if len(st.Refused) != len(reasons) {
		t.Fatalf("Stats.Refused has %d reasons, want %d", len(st.Refused), len(reasons))
	}
	for _, want := range reasons {
		if n, ok := st.Refused[want]; !ok || n != 0 {
			t.Errorf("Refused[%q] = %d, %v; want 0, true", want, n, ok)
		}
	}
	if got := fmt.Sprint(ReasonOf(nil)); got != "" {
		t.Errorf("ReasonOf(nil) = %q, want empty", got)
	}
}
