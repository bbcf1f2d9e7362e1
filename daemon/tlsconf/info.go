package tlsconf

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
)

// WarnWithin is how close to its NotAfter a certificate is reported as
// expiring. Tailscale and Let's Encrypt renew 30 days ahead, so a
// certificate this close means the renewal has stopped.
const WarnWithin = 14 * 24 * time.Hour

// SelfSignedSource is Info.Source for the self-signed certificate.
const SelfSignedSource = "self-signed"

// Info describes a certificate: the leaf, for `cabinet doctor` and the logs.
type Info struct {
	Subject     string   // RFC 2253, e.g. "CN=cabinet.tail1234.ts.net"
	Issuer      string   // RFC 2253; equal to Subject when self-signed
	DNSNames    []string // the leaf's DNS SANs
	IPs         []string // the leaf's IP SANs
	NotBefore   time.Time
	NotAfter    time.Time
	Fingerprint string // SHA-256 of the leaf, as Fingerprint formats it
	Source      string // the certificate file's path, or SelfSignedSource
}

func infoOf(leaf *x509.Certificate, source string) Info {
	ips := make([]string, 0, len(leaf.IPAddresses))
	for _, ip := range leaf.IPAddresses {
		ips = append(ips, ip.String())
	}
	return Info{
		Subject:     leaf.Subject.String(),
		Issuer:      leaf.Issuer.String(),
		DNSNames:    slices.Clone(leaf.DNSNames),
		IPs:         ips,
		NotBefore:   leaf.NotBefore,
		NotAfter:    leaf.NotAfter,
		Fingerprint: Fingerprint(leaf.Raw),
		Source:      source,
	}
}

// clone copies the slices, so a caller cannot change the served Info.
func (i Info) clone() Info {
	i.DNSNames = slices.Clone(i.DNSNames)
	i.IPs = slices.Clone(i.IPs)
	return i
}

// Expiry returns an *ExpiryError when the certificate has expired or expires
// within WarnWithin of now, and nil otherwise.
func (i Info) Expiry(now time.Time) error {
	left := i.NotAfter.Sub(now)
	if left > WarnWithin {
		return nil
	}
	return &ExpiryError{Source: i.Source, NotAfter: i.NotAfter, Left: left}
}

// ExpiryError warns that the served certificate expires soon or has expired.
// It is a warning: the certificate is still served.
type ExpiryError struct {
	Source   string        // as Info.Source
	NotAfter time.Time     // the leaf's NotAfter
	Left     time.Duration // until NotAfter; zero or less once expired
}

// Expired tells whether NotAfter has passed.
func (e *ExpiryError) Expired() bool { return e.Left <= 0 }

func (e *ExpiryError) Error() string {
	when := e.NotAfter.UTC().Format(time.DateOnly)
	what, fix := "the MCP TLS certificate "+e.Source, "renew it (e.g. tailscale cert): the new files are taken without a restart"
	if e.Source == SelfSignedSource {
		what, fix = "the self-signed MCP TLS certificate", "Cabinet renews it 30 days ahead, so check that the state dir is writable"
	}
	if e.Expired() {
		return fmt.Sprintf("%s expired on %s and clients refuse it: %s", what, when, fix)
	}
	left := "within a day"
	if days := int(e.Left / (24 * time.Hour)); days > 0 {
		left = fmt.Sprintf("in %d days", days)
	}
	return fmt.Sprintf("%s expires on %s (%s): %s", what, when, left, fix)
}

// Fingerprint returns the SHA-256 of a DER certificate as uppercase hex pairs
// joined by colons, as `openssl x509 -noout -fingerprint -sha256` prints it.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	var b strings.Builder
	b.Grow(len(sum) * 3)
	for i, c := range sum {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02X", c)
	}
	return b.String()
}

// ReadFingerprint returns the Fingerprint of the first certificate in a PEM
// file, e.g. the kept self-signed one (SelfSignedPaths), without starting
// anything.
func ReadFingerprint(certPath string) (string, error) {
	info, err := ReadInfo(certPath)
	if err != nil {
		return "", err
	}
	return info.Fingerprint, nil
}

// ReadInfo describes the first certificate in a PEM file, for `cabinet
// doctor`, which runs apart from the daemon's Source.
func ReadInfo(certPath string) (Info, error) {
	b, err := bounded.ReadFile(certPath, maxFileBytes)
	if err != nil {
		return Info{}, fmt.Errorf("read certificate %s: %w", certPath, err)
	}
	leaf, err := parseLeaf(b)
	if err != nil {
		return Info{}, fmt.Errorf("read certificate %s: %w", certPath, err)
	}
	return infoOf(leaf, certPath), nil
}

// parseLeaf parses the first CERTIFICATE block of PEM data.
func parseLeaf(data []byte) (*x509.Certificate, error) {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil, errors.New("no PEM CERTIFICATE block: is it a PEM certificate file?")
		}
		if block.Type == "CERTIFICATE" {
			return x509.ParseCertificate(block.Bytes)
		}
	}
}

// CheckFiles loads a certificate file and its key file as Open does, and
// describes the certificate: for `cabinet doctor`, which runs apart from
// the daemon's Source. The error names the key to fix.
func CheckFiles(certFile, keyFile string) (Info, error) {
	pp := pairPaths{cert: certFile, key: keyFile, certName: keyCertFile, keyName: keyKeyFile, source: certFile}
	p, err := pp.load()
	if err != nil {
		return Info{}, fmt.Errorf("mcp tls: %w", err)
	}
	return p.info.clone(), nil
}
