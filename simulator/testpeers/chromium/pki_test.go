package chromium

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"
)

// testPKI is a test CA and a server certificate it signed.
type testPKI struct {
	CA, Leaf *x509.Certificate
	caKey    *ecdsa.PrivateKey
	leafKey  *ecdsa.PrivateKey
}

// newPKI makes a CA and a leaf for hosts (names and IP addresses).
func newPKI(t testing.TB, hosts ...string) *testPKI {
	t.Helper()
	p := &testPKI{}
	var err error
	if p.caKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	if p.leafKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "cabinet test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &p.caKey.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	if p.CA, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leafTmpl.IPAddresses = append(leafTmpl.IPAddresses, ip)
		} else {
			leafTmpl.DNSNames = append(leafTmpl.DNSNames, h)
		}
	}
	der, err = x509.CreateCertificate(rand.Reader, leafTmpl, p.CA, &p.leafKey.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	if p.Leaf, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	return p
}

// serverConfig is a TLS config presenting the leaf, and the CA after it
// when withCA.
func (p *testPKI) serverConfig(withCA bool) *tls.Config {
	chain := [][]byte{p.Leaf.Raw}
	if withCA {
		chain = append(chain, p.CA.Raw)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: chain, PrivateKey: p.leafKey, Leaf: p.Leaf}}}
}
