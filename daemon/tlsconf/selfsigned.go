package tlsconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	// selfSignedLifetime is 820 days, as Syncthing gives its GUI's HTTPS
	// certificate (its 20-year certificate is the device identity, checked
	// by ID, never by a TLS stack's trust store). macOS and iOS refuse any
	// TLS server certificate valid for more than 825 days, including one the
	// user trusted by hand (support.apple.com/HT210176; mkcert stays under it
	// too), so a longer life would break exactly the users who installed the
	// certificate. The renewal keeps the key, so a client that pins the
	// public key is not affected; one that pins the certificate's
	// fingerprint has to take the new one every ~2 years (OnReload says).
	selfSignedLifetime = 820 * 24 * time.Hour
	// renewWithin: a kept certificate this close to its NotAfter is renewed.
	renewWithin = 30 * 24 * time.Hour
	// backdate covers a client whose clock runs a little behind ours.
	backdate = time.Hour
	// maxCommonName is RFC 5280's upper bound for a CommonName.
	maxCommonName = 64
)

// SelfSignedPaths returns the files that keep the self-signed pair in dir:
// the certificate (0644) and its key (0600).
func SelfSignedPaths(dir string) (cert, key string) {
	return filepath.Join(dir, "mcp-tls.crt"), filepath.Join(dir, "mcp-tls.key")
}

// dueForRenewal tells whether a self-signed pair must be replaced. A clock
// behind NotBefore (a board without RTC, before NTP) does not count: the
// clock is wrong, not the certificate.
func dueForRenewal(p *pair, now time.Time) bool {
	return now.After(p.cert.Leaf.NotAfter.Add(-renewWithin))
}

// keepSelfSigned is Open's self-signed mode: the kept pair if it loads and is
// not due, otherwise a new one, written to the state dir.
func (s *Source) keepSelfSigned() (*pair, error) {
	dir := filepath.Dir(s.files.cert)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("make the state dir for the self-signed certificate: %w; check that %s is writable", err, dir)
	}
	old, err := s.files.load()
	if err == nil && !dueForRenewal(old, s.now()) {
		return old, nil
	}
	unusable := err != nil && !s.noneKept()
	if err != nil {
		old = nil // not usable: a new key too
	}
	p, werr := s.makeSelfSigned(old)
	switch {
	case werr != nil && old != nil:
		// Due but still loadable: serve it; the poll retries the renewal.
		s.report(fmt.Errorf("mcp tls: renew: %w; still serving the kept certificate, retried every %s", werr, s.checkEvery), true)
		return old, nil
	case werr != nil:
		return nil, werr
	}
	if unusable {
		s.onError(fmt.Errorf("mcp tls: the kept self-signed certificate was unusable (%w): made a new one, fingerprint %s; clients that trusted the old one must trust this one",
			err, p.info.Fingerprint))
	}
	s.onReload(p.info.clone())
	return p, nil
}

// noneKept tells whether neither file exists: the first start, nothing to report.
func (s *Source) noneKept() bool {
	_, cerr := os.Lstat(s.files.cert)
	_, kerr := os.Lstat(s.files.key)
	return errors.Is(cerr, fs.ErrNotExist) && errors.Is(kerr, fs.ErrNotExist)
}

// renewSelfSigned, on each poll, renews the served pair when it is due, so
// a daemon that runs for months never serves an expired certificate.
func (s *Source) renewSelfSigned() {
	cur := s.cur.Load()
	if !dueForRenewal(cur, s.now()) {
		return
	}
	p, err := s.makeSelfSigned(cur)
	if err != nil {
		s.report(fmt.Errorf("mcp tls: renew: %w; still serving the previous certificate, retried every %s", err, s.checkEvery), true)
		return
	}
	s.take(p)
}

// makeSelfSigned makes and writes a new certificate: with old's key when it
// is a P-256 key (a renewal), otherwise with a new key.
func (s *Source) makeSelfSigned(old *pair) (*pair, error) {
	var key *ecdsa.PrivateKey
	if old != nil {
		if k, ok := old.cert.PrivateKey.(*ecdsa.PrivateKey); ok && k.Curve == elliptic.P256() {
			key = k
		}
	}
	if key == nil {
		var err error
		if key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			return nil, fmt.Errorf("make a key: %w", err)
		}
	}
	dns, ips, skipped := sans(s.hosts)
	if len(skipped) > 0 {
		s.onError(fmt.Errorf("mcp tls: left out of the self-signed certificate, neither a host name nor an IP address: %q", skipped))
	}
	der, err := createSelfSigned(key, dns, ips, s.now())
	if err != nil {
		return nil, fmt.Errorf("make the self-signed certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode the key: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	// Key first: a crash between the two leaves a pair that does not
	// match, which the next start replaces.
	if err := writeAtomic(s.files.key, keyPEM, 0o600); err != nil {
		return nil, fmt.Errorf("write %s: %w; check that the state dir is writable", s.files.key, err)
	}
	if err := writeAtomic(s.files.cert, certPEM, 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w; check that the state dir is writable", s.files.cert, err)
	}
	return parsePair(certPEM, keyPEM, SelfSignedSource)
}

// createSelfSigned returns the DER of a server certificate signed by key.
func createSelfSigned(key *ecdsa.PrivateKey, dns []string, ips []net.IP, now time.Time) ([]byte, error) {
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	serial, err := rand.Int(rand.Reader, limit.Sub(limit, big.NewInt(1)))
	if err != nil {
		return nil, err
	}
	serial.Add(serial, big.NewInt(1)) // positive, as RFC 5280 wants
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName(dns)},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(selfSignedLifetime),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              dns,
		IPAddresses:           ips,
	}
	return x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
}

// commonName is "Cabinet on <host>", from the first host name that is not
// localhost. Clients match the SANs, never this; it is for people.
func commonName(dns []string) string {
	for _, d := range dns {
		if d != "localhost" {
			cn := "Cabinet on " + d
			if len(cn) > maxCommonName {
				cn = cn[:maxCommonName]
			}
			return cn
		}
	}
	return "Cabinet"
}

// sans sorts hosts into DNS names and IP addresses, deduplicated, in order.
// Entries that are neither are returned in skipped. No usable host at all
// gives localhost, 127.0.0.1 and ::1.
func sans(hosts []string) (dns []string, ips []net.IP, skipped []string) {
	seenDNS, seenIP := map[string]bool{}, map[netip.Addr]bool{}
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
			a = a.WithZone("").Unmap() // a zone cannot be in a certificate
			if !seenIP[a] {
				seenIP[a] = true
				ips = append(ips, net.IP(a.AsSlice()))
			}
			continue
		}
		name := strings.TrimSuffix(strings.ToLower(h), ".")
		if !validDNSName(name) {
			skipped = append(skipped, h)
			continue
		}
		if !seenDNS[name] {
			seenDNS[name] = true
			dns = append(dns, name)
		}
	}
	if len(dns) == 0 && len(ips) == 0 {
		dns, ips = []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1).To4(), net.IPv6loopback}
	}
	return dns, ips, skipped
}

// validDNSName accepts lowercase LDH labels, plus the underscore some home
// routers hand out in host names.
func validDNSName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// writeAtomic replaces path with data: a temporary file in the same
// directory, synced, then renamed over path, then the directory synced, so
// a crash leaves the old file or the new one, never half of one.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp") // 0600 from the start
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up on failure
	if _, err = tmp.Write(data); err == nil && mode != 0o600 {
		// Best effort: exFAT over FUSE has no modes and refuses chmod;
		// there the key's protection is the mount's, not ours.
		_ = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// Best effort: exFAT and some FUSE file systems refuse a directory sync.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
