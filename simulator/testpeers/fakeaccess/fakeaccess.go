// Package fakeaccess is a fake Cloudflare Access for tests: the team's
// certs endpoint (/cdn-cgi/access/certs, a JWKS of RS256 keys, as Access
// publishes it) and the assertions Access puts in the
// Cf-Access-Jwt-Assertion header of the requests it lets through, valid or
// forged in each of the ways an attacker would try. Keys can be made ahead
// of publishing them, so a test can send an assertion under a kid the
// cabinet does not know yet and then rotate it in.
//
// An Issuer is an http.Handler whose zero value is ready to use: serve it
// on loopback (the cabinet accepts a plain http certs URL only there) and
// point cabinet.mcp.cf_access.certs_url at CertsPath on it.
package fakeaccess

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// CertsPath is where Access publishes a team's keys.
const CertsPath = "/cdn-cgi/access/certs"

// Defaults of an Issuer's zero value.
const (
	DefaultTeamDomain = "cabinet-test.cloudflareaccess.com"
	// DefaultAudience is an application's AUD tag: 64 hex digits.
	DefaultAudience = "7e1b4c6a0f3d2e9b8a5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a"
)

// Issuer signs assertions and serves the keys that verify them.
type Issuer struct {
	// TeamDomain and Audience are the team's and the application's
	// (defaults above); Now is the clock of the claims (default time.Now).
	TeamDomain string
	Audience   string
	Now        func() time.Time

	mu        sync.Mutex
	published []*Key
	seq       int
	hits      atomic.Int64
}

// Key is one signing key; Kid names it in the JWKS and in assertions.
type Key struct {
	Kid  string
	priv *rsa.PrivateKey
}

// Claims are an assertion's. Zero times take a sign-in made now: issued and
// valid from now, expiring in an hour; empty Issuer and Audience take the
// Issuer's. An empty Email is a service token (named by Subject).
type Claims struct {
	Email, Subject              string
	Issuer, Audience            string
	IssuedAt, NotBefore, Expiry time.Time
}

func (i *Issuer) team() string {
	if i.TeamDomain == "" {
		return DefaultTeamDomain
	}
	return i.TeamDomain
}

// IssuerURL is the iss of the team's assertions.
func (i *Issuer) IssuerURL() string { return "https://" + i.team() }

// AUD is the application's audience tag.
func (i *Issuer) AUD() string {
	if i.Audience == "" {
		return DefaultAudience
	}
	return i.Audience
}

// Team is the team domain (cabinet.mcp.cf_access.team_domain).
func (i *Issuer) Team() string { return i.team() }

func (i *Issuer) now() time.Time {
	if i.Now == nil {
		return time.Now()
	}
	return i.Now()
}

// NewKey makes a key without publishing it. It panics if the system's
// random source fails, as the tests using it could not go on.
func (i *Issuer) NewKey() *Key {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(fmt.Sprintf("fakeaccess: generate a key: %v", err))
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.seq++
	return &Key{Kid: fmt.Sprintf("fake-kid-%d", i.seq), priv: priv}
}

// Publish adds k to the keys served (a rotation: Access publishes the new
// key beside the old one for a while).
func (i *Issuer) Publish(k *Key) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.published = append(i.published, k)
}

// Current is the first published key, made and published on first use.
func (i *Issuer) Current() *Key {
	i.mu.Lock()
	if len(i.published) > 0 {
		k := i.published[0]
		i.mu.Unlock()
		return k
	}
	i.mu.Unlock()
	k := i.NewKey()
	i.mu.Lock()
	defer i.mu.Unlock()
	if len(i.published) > 0 { // another caller won
		return i.published[0]
	}
	i.published = append(i.published, k)
	return k
}

// Hits counts the requests for the keys.
func (i *Issuer) Hits() int64 { return i.hits.Load() }

// ServeHTTP serves the JWKS at CertsPath, as Access does (public_cert and
// public_certs, the same keys as X.509, are left out).
func (i *Issuer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != CertsPath || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	i.hits.Add(1)
	i.Current()
	type jwk struct {
		Kid string `json:"kid"`
		Kty string `json:"kty"`
		Alg string `json:"alg"`
		Use string `json:"use"`
		E   string `json:"e"`
		N   string `json:"n"`
	}
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	i.mu.Lock()
	for _, k := range i.published {
		pub := k.priv.PublicKey
		doc.Keys = append(doc.Keys, jwk{Kid: k.Kid, Kty: "RSA", Alg: "RS256", Use: "sig",
			E: base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
			N: base64.RawURLEncoding.EncodeToString(pub.N.Bytes())})
	}
	i.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(doc)
}

// mapClaims fills in c's defaults.
func (i *Issuer) mapClaims(c Claims) jwt.MapClaims {
	now := i.now()
	or := func(t, def time.Time) int64 {
		if t.IsZero() {
			return def.Unix()
		}
		return t.Unix()
	}
	iss, aud := c.Issuer, c.Audience
	if iss == "" {
		iss = i.IssuerURL()
	}
	if aud == "" {
		aud = i.AUD()
	}
	m := jwt.MapClaims{"iss": iss, "aud": []string{aud}, "sub": c.Subject,
		"iat": or(c.IssuedAt, now), "nbf": or(c.NotBefore, now), "exp": or(c.Expiry, now.Add(time.Hour)),
		"type": "app", "identity_nonce": "fake", "country": "XX"}
	if c.Email != "" {
		m["email"] = c.Email
	} else {
		m["common_name"] = c.Subject
	}
	return m
}

// Sign returns c signed by k with RS256, as Access signs.
func (i *Issuer) Sign(k *Key, c Claims) string {
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, i.mapClaims(c))
	t.Header["kid"] = k.Kid
	s, err := t.SignedString(k.priv)
	if err != nil {
		panic(fmt.Sprintf("fakeaccess: sign: %v", err))
	}
	return s
}

// Assertion is a valid assertion for email, signed with the current key.
func (i *Issuer) Assertion(email string) string {
	return i.Sign(i.Current(), Claims{Email: email, Subject: "sub-" + email})
}

// AlgNone is an unsigned assertion for email (alg "none") naming the
// current key.
func (i *Issuer) AlgNone(email string) string {
	t := jwt.NewWithClaims(jwt.SigningMethodNone, i.mapClaims(Claims{Email: email}))
	t.Header["kid"] = i.Current().Kid
	s, err := t.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		panic(fmt.Sprintf("fakeaccess: alg none: %v", err))
	}
	return s
}

// HS256WithPublicKey is the classic key-confusion forgery: an HMAC
// assertion whose secret is the current key's public PEM, which anyone can
// read from the certs endpoint.
func (i *Issuer) HS256WithPublicKey(email string) string {
	k := i.Current()
	der, err := x509.MarshalPKIXPublicKey(&k.priv.PublicKey)
	if err != nil {
		panic(fmt.Sprintf("fakeaccess: public key: %v", err))
	}
	secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, i.mapClaims(Claims{Email: email}))
	t.Header["kid"] = k.Kid
	s, err := t.SignedString(secret)
	if err != nil {
		panic(fmt.Sprintf("fakeaccess: hs256: %v", err))
	}
	return s
}
