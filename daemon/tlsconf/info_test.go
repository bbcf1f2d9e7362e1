package tlsconf

import (
	"bytes"
	"errors"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestFingerprint(t *testing.T) {
	tests := []struct {
		der  []byte
		want string
	}{
		{nil, "E3:B0:C4:42:98:FC:1C:14:9A:FB:F4:C8:99:6F:B9:24:27:AE:41:E4:64:9B:93:4C:A4:95:99:1B:78:52:B8:55"},
		{[]byte("abc"), "BA:78:16:BF:8F:01:CF:EA:41:41:40:DE:5D:AE:22:23:B0:03:61:A3:96:17:7A:9C:B4:10:FF:61:F2:00:15:AD"},
	}
	for _, tt := range tests {
		if got := Fingerprint(tt.der); got != tt.want {
			t.Errorf("Fingerprint(%q) = %s; want %s", tt.der, got, tt.want)
		}
	}
}

// fingerprintForm is openssl's: 32 uppercase hex pairs joined by colons.
var fingerprintForm = regexp.MustCompile(`^([0-9A-F]{2}:){31}[0-9A-F]{2}$`)

// ReadInfo describes the leaf of a chain file, as the doctor shows it.
func TestReadInfo(t *testing.T) {
	ca, dir := newCA(t), t.TempDir()
	notAfter := time.Now().Add(90 * 24 * time.Hour).Truncate(time.Second)
	l := ca.issue(t, 7, notAfter)
	certPath, _ := pairFiles(t, dir, l)

	info, err := ReadInfo(certPath)
	if err != nil {
		t.Fatal(err)
	}
	if info.Subject != "CN=cabinet.test.ts.net" || info.Issuer != "CN=test CA" || info.Source != certPath {
		t.Errorf("subject, issuer, source = %q, %q, %q; want the leaf's, the CA's, the path", info.Subject, info.Issuer, info.Source)
	}
	if !slices.Equal(info.DNSNames, []string{"localhost", "cabinet.test.ts.net"}) || !slices.Equal(info.IPs, []string{"127.0.0.1"}) {
		t.Errorf("SANs = %v %v", info.DNSNames, info.IPs)
	}
	if !info.NotAfter.Equal(notAfter) {
		t.Errorf("NotAfter = %s; want %s", info.NotAfter, notAfter)
	}
	if info.Fingerprint != Fingerprint(l.der) || !fingerprintForm.MatchString(info.Fingerprint) {
		t.Errorf("Fingerprint = %s; want the leaf's %s", info.Fingerprint, Fingerprint(l.der))
	}
}

func TestReadFingerprintErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		writeInPlace(t, p, b)
		return p
	}
	tests := []struct {
		name     string
		path     string
		want     string
		notExist bool
	}{
		{"missing", filepath.Join(dir, "absent.crt"), "absent.crt", true},
		{"not PEM", write("text.crt", []byte("hello")), "no PEM CERTIFICATE block", false},
		{"a key, no certificate", write("key.crt", []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")), "no PEM CERTIFICATE block", false},
		{"oversized", write("big.crt", bytes.Repeat([]byte{'A'}, maxFileBytes+1)), "larger than 1 MiB", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadFingerprint(tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ReadFingerprint = %v; want an error containing %q", err, tt.want)
			}
			if got := errors.Is(err, fs.ErrNotExist); got != tt.notExist {
				t.Errorf("errors.Is(err, fs.ErrNotExist) = %v; want %v", got, tt.notExist)
			}
		})
	}
}

func TestExpiry(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		source string
		left   time.Duration
		want   []string // nil: no warning
	}{
		{"15 days", "/userdata/cert.pem", 15 * 24 * time.Hour, nil},
		{"14 days", "/userdata/cert.pem", WarnWithin, []string{"/userdata/cert.pem", "expires on 2026-03-15", "in 14 days", "renew it"}},
		{"hours", "/userdata/cert.pem", 5 * time.Hour, []string{"within a day"}},
		{"expired", "/userdata/cert.pem", -48 * time.Hour, []string{"expired on 2026-02-27", "clients refuse it", "renew it"}},
		{"self-signed", SelfSignedSource, 3 * 24 * time.Hour, []string{"self-signed", "in 3 days", "state dir is writable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Info{Source: tt.source, NotAfter: now.Add(tt.left)}.Expiry(now)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Expiry = %v; want nil", err)
				}
				return
			}
			var ee *ExpiryError
			if !errors.As(err, &ee) || ee.Expired() != (tt.left <= 0) {
				t.Fatalf("Expiry = %#v; want an *ExpiryError, expired %v", err, tt.left <= 0)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Expiry = %q; want it to contain %q", err, w)
				}
			}
		})
	}
}

// FuzzParseLeaf: whatever a certificate file holds, reading it fails or
// gives a leaf with a well-formed fingerprint; it never panics.
func FuzzParseLeaf(f *testing.F) {
	f.Add([]byte("hello"))
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))
	f.Add(newCA(f).issue(f, 1, time.Now().Add(time.Hour)).certPEM)
	f.Fuzz(func(t *testing.T, data []byte) {
		leaf, err := parseLeaf(data)
		if err != nil {
			return
		}
		if fp := infoOf(leaf, "fuzz").Fingerprint; !fingerprintForm.MatchString(fp) {
			t.Errorf("fingerprint %q is not in openssl's form", fp)
		}
	})
}
