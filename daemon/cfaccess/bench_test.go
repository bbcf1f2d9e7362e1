package cfaccess

import (
	"context"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// BenchmarkVerify prices the three paths an attacker can choose between: a
// forgery refused by the cheap checks (expired), one that costs an RSA
// verification (only the signature is wrong), and a valid assertion for
// comparison. The forged path should cost about what the valid one does;
// both are one RSA-2048 public-key operation.
func BenchmarkVerify(b *testing.B) {
	r := newRig(b, nil)
	k1 := key(0, "k1")
	r.mustAccept(r.sign(k1, nil)) // fetch the keys outside the timing
	cases := []struct {
		name      string
		assertion string
		wantErr   bool
	}{
		{"valid", r.sign(k1, nil), false},
		{"forged", r.sign(key(3, "k1"), nil), true},
		{"expired", r.sign(k1, func(c jwt.MapClaims) { c["exp"] = start.Add(-time.Hour).Unix() }), true},
	}
	ctx := context.Background()
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.v.Verify(ctx, c.assertion); (err != nil) != c.wantErr {
					b.Fatalf("Verify: %v", err)
				}
			}
		})
	}
}
