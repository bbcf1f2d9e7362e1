package cfaccess

import (
	"errors"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// FuzzVerify feeds Verify arbitrary assertions. It must never panic, must
// refuse with one of the listed reasons, and must accept nothing but the
// valid seeds themselves: with canonical base64 and no stray bytes allowed,
// a signature has one spelling, so any other accepted string is a forgery.
func FuzzVerify(f *testing.F) {
	r := newRig(f, nil)
	k1 := key(0, "k1")
	valid := []string{
		r.sign(k1, nil),
		r.sign(k1, func(c jwt.MapClaims) { delete(c, "email"); c["common_name"] = "svc" }),
	}
	for _, s := range valid {
		f.Add(s)
		parts := strings.Split(s, ".")
		f.Add(parts[0] + "." + parts[1] + ".")
		f.Add(parts[0] + "." + parts[1] + "." + parts[2][1:])
	}
	f.Add(r.sign(key(3, "k1"), nil))
	f.Add(r.sign(key(1, "k2"), nil))
	f.Add(signWith(f, jwt.SigningMethodHS256, "k1", []byte("secret"), r.claims(), nil))
	f.Add(signWith(f, jwt.SigningMethodNone, "k1", jwt.UnsafeAllowNoneSignatureType, r.claims(), nil))
	f.Add("")
	f.Add("..")
	f.Add("e30.e30.")
	f.Add("eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.bnVsbA.AA")
	f.Fuzz(func(t *testing.T, assertion string) {
		id, err := r.verify(assertion)
		if err == nil {
			for _, s := range valid {
				if assertion == s {
					return
				}
			}
			t.Fatalf("accepted %q as %+v", assertion, id)
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error %v (%T) is not an *Error", err, err)
		}
		known := false
		for _, want := range reasons {
			known = known || e.Reason() == want
		}
		if !known {
			t.Fatalf("unlisted reason %q", e.Reason())
		}
	})
}

// FuzzParseJWKS feeds the certs parser arbitrary documents: it must never
// panic, and every key it keeps must be one Verify may trust.
func FuzzParseJWKS(f *testing.F) {
	f.Add(jwksOf(key(0, "k1"), key(1, "k2")))
	f.Add([]byte(`{"keys":[{"kid":"a","kty":"RSA","e":"AQAB","n":"AQAB"}]}`))
	f.Add([]byte(`{"keys":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		keys, err := parseJWKS(body)
		if err == nil && len(keys) == 0 {
			t.Fatal("no error and no keys")
		}
		for kid, k := range keys {
			if bits := k.N.BitLen(); kid == "" || bits < minKeyBits || bits > maxKeyBits || k.E < 3 || k.E%2 == 0 {
				t.Fatalf("kept key %q of %d bits, e=%d", kid, bits, k.E)
			}
		}
	})
}
