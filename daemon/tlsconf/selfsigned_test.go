package tlsconf

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var testHosts = []string{"batocera", "batocera.local", "192.168.1.20", "fe80::1%eth0", "localhost", "127.0.0.1", "::1"}

// keptKey reads the public key of the kept pair.
func keptKey(t *testing.T, dir string) *ecdsa.PublicKey {
	t.Helper()
	cert, key := SelfSignedPaths(dir)
	p, err := pairPaths{cert: cert, key: key}.load()
	if err != nil {
		t.Fatalf("the kept pair does not load: %v", err)
	}
	return p.cert.PrivateKey.(*ecdsa.PrivateKey).Public().(*ecdsa.PublicKey)
}

// The first Open makes the pair with the right modes; the next reuses it.
func TestSelfSignedMadeOnceThenKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state") // not there yet
	rec := newRecorder()
	first := open(t, rec.with(Options{SelfSignedDir: dir, Hosts: testHosts}))
	errs, reloads := rec.snapshot()
	if len(errs) != 0 || len(reloads) != 1 {
		t.Fatalf("first Open reported errors %v, %d reloads; want none and 1 (the new certificate)", errs, len(reloads))
	}
	info := first.Info()
	if info.Source != SelfSignedSource || info.Subject != "CN=Cabinet on batocera" || info.Issuer != info.Subject {
		t.Errorf("Info = %+v; want source %q, subject and issuer CN=Cabinet on batocera", info, SelfSignedSource)
	}
	certPath, keyPath := SelfSignedPaths(dir)
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{{certPath, 0o644}, {keyPath, 0o600}} {
		fi, err := os.Stat(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != f.mode {
			t.Errorf("%s mode = %o; want %o", filepath.Base(f.path), got, f.mode)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	rec2 := newRecorder()
	second := open(t, rec2.with(Options{SelfSignedDir: dir, Hosts: testHosts}))
	if got := second.Info().Fingerprint; got != info.Fingerprint {
		t.Errorf("second Open fingerprint = %s; want the kept %s", got, info.Fingerprint)
	}
	if errs, reloads := rec2.snapshot(); len(errs) != 0 || len(reloads) != 0 {
		t.Errorf("second Open reported errors %v, %d reloads; want none", errs, len(reloads))
	}
	if got, err := ReadFingerprint(certPath); err != nil || got != info.Fingerprint {
		t.Errorf("ReadFingerprint = %s, %v; want %s", got, err, info.Fingerprint)
	}
}

// The served certificate is the kept one: a client trusting it alone
// verifies it by IP (no SNI) and by name, and its SHA-256 is ReadFingerprint's.
func TestSelfSignedServed(t *testing.T) {
	dir := t.TempDir()
	src := open(t, Options{SelfSignedDir: dir, Hosts: testHosts})
	addr := serve(t, src.Config())
	certPath, _ := SelfSignedPaths(dir)
	kept, err := ReadFingerprint(certPath)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(certPath)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	for _, name := range []string{"", "localhost", "batocera.local"} {
		c := peer(t, addr, name, roots)
		if got := fmt.Sprintf("% X", sha256.Sum256(c.Raw)); strings.ReplaceAll(got, " ", ":") != kept {
			t.Errorf("as %q: served SHA-256 %s; want ReadFingerprint's %s", name, got, kept)
		}
	}

	c := peer(t, addr, "", roots)
	if c.KeyUsage != x509.KeyUsageDigitalSignature || !slices.Equal(c.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) || c.IsCA {
		t.Errorf("usage = %v, %v, CA %v; want DigitalSignature, ServerAuth, not a CA", c.KeyUsage, c.ExtKeyUsage, c.IsCA)
	}
	if bits := c.SerialNumber.BitLen(); bits > 128 || c.SerialNumber.Sign() <= 0 {
		t.Errorf("serial %s has %d bits; want a positive 128-bit number", c.SerialNumber, bits)
	}
	if got := c.NotAfter.Sub(c.NotBefore); got != selfSignedLifetime+backdate {
		t.Errorf("validity = %s; want %s", got, selfSignedLifetime+backdate)
	}
	if _, ok := c.PublicKey.(*ecdsa.PublicKey); !ok {
		t.Errorf("public key is %T; want ECDSA", c.PublicKey)
	}
	wantDNS := []string{"batocera", "batocera.local", "localhost"}
	wantIPs := []string{"192.168.1.20", "fe80::1", "127.0.0.1", "::1"}
	if info := src.Info(); !slices.Equal(info.DNSNames, wantDNS) || !slices.Equal(info.IPs, wantIPs) {
		t.Errorf("SANs = %v %v; want %v %v", info.DNSNames, info.IPs, wantDNS, wantIPs)
	}
}

// A kept certificate is renewed at Open when it is expired or within 30
// days of it, keeping its key; otherwise it is kept, a clock that is behind
// (no RTC, before NTP) included.
func TestSelfSignedRenewedWhenDue(t *testing.T) {
	made := time.Now()
	notAfter := made.Add(selfSignedLifetime)
	tests := []struct {
		name    string
		now     time.Time
		renewed bool
	}{
		{"fresh", made, false},
		{"31 days left", notAfter.Add(-31 * 24 * time.Hour), false},
		{"clock a year behind", made.Add(-365 * 24 * time.Hour), false},
		{"29 days left", notAfter.Add(-29 * 24 * time.Hour), true},
		{"expired", notAfter.Add(time.Hour), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			old := open(t, Options{SelfSignedDir: dir, Now: func() time.Time { return made }}).Info()
			oldKey := keptKey(t, dir)

			rec := newRecorder()
			src := open(t, rec.with(Options{SelfSignedDir: dir, Now: func() time.Time { return tt.now }}))
			got := src.Info()
			if renewed := got.Fingerprint != old.Fingerprint; renewed != tt.renewed {
				t.Fatalf("renewed = %v; want %v", renewed, tt.renewed)
			}
			errs, reloads := rec.snapshot()
			if len(errs) != 0 {
				t.Errorf("errors = %v; want none", errs)
			}
			if !tt.renewed {
				return
			}
			if len(reloads) != 1 || reloads[0].Fingerprint != got.Fingerprint {
				t.Errorf("reloads = %+v; want one, for the new certificate", reloads)
			}
			if !got.NotAfter.After(tt.now.Add(renewWithin)) {
				t.Errorf("new NotAfter %s; want well after %s", got.NotAfter, tt.now)
			}
			if !keptKey(t, dir).Equal(oldKey) {
				t.Error("the renewal changed the key; want it kept, for clients that pin it")
			}
			certPath, _ := SelfSignedPaths(dir)
			if fp, _ := ReadFingerprint(certPath); fp != got.Fingerprint {
				t.Errorf("kept file's fingerprint = %s; want the served %s", fp, got.Fingerprint)
			}
		})
	}
}

// An unusable kept pair is replaced, key included, and the replacement
// reported (its clients have to trust a new certificate).
func TestSelfSignedUnusableReplaced(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(t *testing.T, cert, key string)
	}{
		{"corrupt key", func(t *testing.T, _, key string) { writeInPlace(t, key, []byte("-----BEGIN PRIVATE KEY-----\nnope\n")) }},
		{"corrupt cert", func(t *testing.T, cert, _ string) { writeInPlace(t, cert, []byte("garbage")) }},
		{"key missing", func(t *testing.T, _, key string) { os.Remove(key) }},
		{"oversized cert", func(t *testing.T, cert, _ string) { writeInPlace(t, cert, bytes.Repeat([]byte{'A'}, maxFileBytes+1)) }},
		{"key of another pair", func(t *testing.T, _, key string) {
			other := t.TempDir()
			open(t, Options{SelfSignedDir: other})
			_, otherKey := SelfSignedPaths(other)
			b, err := os.ReadFile(otherKey)
			if err != nil {
				t.Fatal(err)
			}
			writeInPlace(t, key, b)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			old := open(t, Options{SelfSignedDir: dir}).Info()
			certPath, keyPath := SelfSignedPaths(dir)
			tt.spoil(t, certPath, keyPath)

			rec := newRecorder()
			src := open(t, rec.with(Options{SelfSignedDir: dir}))
			got := src.Info()
			if got.Fingerprint == old.Fingerprint {
				t.Fatal("the unusable pair was kept")
			}
			errs, _ := rec.snapshot()
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), "unusable") || !strings.Contains(errs[0].Error(), got.Fingerprint) {
				t.Errorf("errors = %v; want one saying the kept pair was unusable and giving the new fingerprint", errs)
			}
			keptKey(t, dir) // loads, so the files match again
			if fi, err := os.Stat(keyPath); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("key file: %v, %v; want mode 600", fi, err)
			}
		})
	}
}

// A daemon running past the renewal point renews without a restart.
func TestSelfSignedRenewedWhileRunning(t *testing.T) {
	dir := t.TempDir()
	var clock atomicTime
	clock.set(time.Now())
	rec := newRecorder()
	src := open(t, rec.with(Options{SelfSignedDir: dir, Hosts: testHosts, Now: clock.get, CheckEvery: 10 * time.Millisecond}))
	old := src.Info()
	addr := serve(t, src.Config())

	clock.set(old.NotAfter.Add(-10 * 24 * time.Hour))
	rec.waitFor(t, "the renewal", func(_ []error, reloads []Info) bool {
		return len(reloads) == 2 // made at Open, then renewed
	})
	_, reloads := rec.snapshot()
	renewed := reloads[1]
	if renewed.Fingerprint == old.Fingerprint {
		t.Fatal("the renewal reported the old certificate")
	}
	certPath, _ := SelfSignedPaths(dir)
	pem, err := os.ReadFile(certPath)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	// The client verifies at the moved clock: the new certificate starts then.
	cfg := &tls.Config{RootCAs: roots, ServerName: "batocera.local", Time: clock.get}
	if got := Fingerprint(peerWith(t, addr, cfg).Raw); got != renewed.Fingerprint {
		t.Errorf("served %s; want the renewed %s", got, renewed.Fingerprint)
	}
}

func TestSANs(t *testing.T) {
	tests := []struct {
		name        string
		hosts       []string
		wantDNS     []string
		wantIPs     []string
		wantSkipped []string
	}{
		{"typical", testHosts,
			[]string{"batocera", "batocera.local", "localhost"}, []string{"192.168.1.20", "fe80::1", "127.0.0.1", "::1"}, nil},
		{"case, trailing dot and duplicates", []string{"Batocera.LOCAL.", "batocera.local", " 10.0.0.2 ", "::ffff:10.0.0.2"},
			[]string{"batocera.local"}, []string{"10.0.0.2"}, nil},
		{"bracketed IPv6", []string{"[2001:db8::7]"}, nil, []string{"2001:db8::7"}, nil},
		{"underscore from a router", []string{"my_box"}, []string{"my_box"}, nil, nil},
		{"not hosts", []string{"bad host", "café", "-x", "a..b", "ok"}, []string{"ok"}, nil, []string{"bad host", "café", "-x", "a..b"}},
		{"none", nil, []string{"localhost"}, []string{"127.0.0.1", "::1"}, nil},
		{"nothing usable", []string{"!"}, []string{"localhost"}, []string{"127.0.0.1", "::1"}, []string{"!"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dns, ips, skipped := sans(tt.hosts)
			var gotIPs []string
			for _, ip := range ips {
				gotIPs = append(gotIPs, ip.String())
			}
			if !slices.Equal(dns, tt.wantDNS) || !slices.Equal(gotIPs, tt.wantIPs) || !slices.Equal(skipped, tt.wantSkipped) {
				t.Errorf("sans(%q) = %q %q %q; want %q %q %q", tt.hosts, dns, gotIPs, skipped, tt.wantDNS, tt.wantIPs, tt.wantSkipped)
			}
			for _, ip := range ips {
				if len(ip) != net.IPv4len && len(ip) != net.IPv6len {
					t.Errorf("IP %v has %d bytes", ip, len(ip))
				}
			}
		})
	}
}

func TestCommonName(t *testing.T) {
	long := strings.Repeat("a", 80)
	tests := []struct {
		dns  []string
		want string
	}{
		{[]string{"localhost", "batocera"}, "Cabinet on batocera"},
		{[]string{"localhost"}, "Cabinet"},
		{nil, "Cabinet"},
		{[]string{long}, ("Cabinet on " + long)[:maxCommonName]},
	}
	for _, tt := range tests {
		if got := commonName(tt.dns); got != tt.want {
			t.Errorf("commonName(%q) = %q; want %q", tt.dns, got, tt.want)
		}
	}
}
