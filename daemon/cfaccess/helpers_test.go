package cfaccess

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/golang-jwt/jwt/v5"
)

const (
	team     = "myteam.cloudflareaccess.com"
	issuer   = "https://" + team
	audience = "4714c1358e65fe4b408ad6d432a5f878f08194bdb4752441fd56faefa9b2b6f2"
)

// start is the fake clock's start; tokens are minted relative to it.
var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// signer is one Access signing key.
type signer struct {
	kid  string
	priv *rsa.PrivateKey
}

// testKeys are generated once per test binary: RSA generation takes long
// enough under -race that doing it per test would dominate the run.
var testKeys = sync.OnceValue(func() []*rsa.PrivateKey {
	keys := make([]*rsa.PrivateKey, 4)
	for i := range keys {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keys[i] = k
	}
	return keys
})

func key(i int, kid string) signer { return signer{kid: kid, priv: testKeys()[i]} }

// certsServer is a fake certs endpoint on loopback that counts its hits.
type certsServer struct {
	srv  *httptest.Server
	hits atomic.Int64

	mu     sync.Mutex
	status int
	body   []byte
	block  chan struct{} // non-nil: requests wait for it to close
}

func newCertsServer(t testing.TB, keys ...signer) *certsServer {
	s := &certsServer{}
	s.serveKeys(keys...)
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		s.mu.Lock()
		status, body, block := s.status, s.body, s.block
		s.mu.Unlock()
		if block != nil {
			select {
			case <-block:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *certsServer) url() string { return s.srv.URL + "/cdn-cgi/access/certs" }

func (s *certsServer) serve(status int, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

func (s *certsServer) serveKeys(keys ...signer) { s.serve(http.StatusOK, jwksOf(keys...)) }

// jwksOf is a certs document shaped like Access's.
func jwksOf(keys ...signer) []byte {
	type jwk struct {
		Kid string `json:"kid"`
		Kty string `json:"kty"`
		Alg string `json:"alg"`
		Use string `json:"use"`
		E   string `json:"e"`
		N   string `json:"n"`
	}
	doc := struct {
		Keys        []jwk             `json:"keys"`
		PublicCert  map[string]string `json:"public_cert"`
		PublicCerts []any             `json:"public_certs"`
	}{PublicCert: map[string]string{"kid": "x", "cert": "-----BEGIN CERTIFICATE-----"}, PublicCerts: []any{}}
	for _, k := range keys {
		pub := k.priv.PublicKey
		doc.Keys = append(doc.Keys, jwk{
			Kid: k.kid, Kty: "RSA", Alg: "RS256", Use: "sig",
			E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
			N: base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		})
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return b
}

// rig is a verifier on a fake clock against a fake certs server holding
// key 0 as "k1".
type rig struct {
	t     testing.TB
	clk   *clock.Fake
	certs *certsServer
	v     *Verifier
}

func newRig(t testing.TB, mod func(*Options)) *rig {
	r := &rig{t: t, clk: clock.NewFake(start)}
	r.certs = newCertsServer(t, key(0, "k1"))
	opts := Options{TeamDomain: team, Audience: audience, CertsURL: r.certs.url(), Now: r.clk.Now}
	if mod != nil {
		mod(&opts)
	}
	v, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r.v = v
	return r
}

// claims are an Access user's assertion claims, valid for an hour from now.
func (r *rig) claims() jwt.MapClaims {
	now := r.clk.Now()
	return jwt.MapClaims{
		"aud":            []string{audience},
		"email":          "alice@example.com",
		"exp":            now.Add(time.Hour).Unix(),
		"iat":            now.Unix(),
		"nbf":            now.Unix(),
		"iss":            issuer,
		"type":           "app",
		"identity_nonce": "6ei69kawdKzMIAPF",
		"sub":            "7335d417-61da-459d-899c-0a01c76a2f94",
		"country":        "FR",
	}
}

// sign mints an assertion signed by k, with mod applied to the claims.
func (r *rig) sign(k signer, mod func(jwt.MapClaims)) string {
	return signWith(r.t, jwt.SigningMethodRS256, k.kid, k.priv, r.claims(), mod)
}

func signWith(t testing.TB, m jwt.SigningMethod, kid string, key any, c jwt.MapClaims, mod func(jwt.MapClaims)) string {
	t.Helper()
	if mod != nil {
		mod(c)
	}
	tok := jwt.NewWithClaims(m, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	return s
}

// verify calls Verify with a deadline, so a test that hangs says where.
func (r *rig) verify(assertion string) (Identity, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return r.v.Verify(ctx, assertion)
}

// mustAccept fails the test unless assertion verifies.
func (r *rig) mustAccept(assertion string) Identity {
	r.t.Helper()
	id, err := r.verify(assertion)
	if err != nil {
		r.t.Fatalf("Verify: %v, want accepted", err)
	}
	return id
}

// mustRefuse fails the test unless assertion is refused for want.
func (r *rig) mustRefuse(assertion string, want Reason) error {
	r.t.Helper()
	_, err := r.verify(assertion)
	if got := ReasonOf(err); got != want {
		r.t.Fatalf("Verify: reason %q (%v), want %q", got, err, want)
	}
	return err
}
