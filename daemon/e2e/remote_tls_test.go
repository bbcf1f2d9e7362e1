package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// testCA issues the cabinet's certificate as a home CA (or Tailscale's
// Let's Encrypt) would; the clients of the test trust it alone.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Cabinet test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pool: pool}
}

// issue returns a server certificate for localhost and 127.0.0.1 (PEM
// chain, PEM key) with the given serial.
func (ca *testCA) issue(t *testing.T, serial int64) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "cabinet.tail0000.ts.net"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(90 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"cabinet.tail0000.ts.net", "localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key) // "EC PRIVATE KEY", as tailscale cert writes it
	if err != nil {
		t.Fatal(err)
	}
	return append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), ca.pem...),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// replace writes data beside path and renames it over path, as tailscale
// cert and certbot renew.
func replace(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path+".new", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

// served is the leaf the server at addr presents (verified against roots
// for serverName unless roots is nil).
func served(addr, serverName string, roots *x509.CertPool) (*x509.Certificate, error) {
	cfg := &tls.Config{RootCAs: roots, ServerName: serverName, InsecureSkipVerify: roots == nil}
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: cfg}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.(*tls.Conn).ConnectionState().PeerCertificates[0], nil
}

// initializeWith posts an MCP initialize with the bearer token through c.
func initializeWith(c *http.Client, url, token string) (reply, error) {
	return postInitialize(c, url, func(req *http.Request) { req.Header.Set("Authorization", "Bearer "+token) })
}

// TestRemoteTLSFiles: with cabinet.mcp.tls_cert_file and tls_key_file
// (tailscale cert's kind of files, from a test CA), the independent SDK
// client passes --strict over https with only that CA trusted; plain HTTP
// still answers on the same port; certificate files replaced while the
// daemon runs are presented at the next handshake; doctor describes them.
func TestRemoteTLSFiles(t *testing.T) {
	cabinettest.Long(t, "certificate files rotated under a running daemon (TestRemoteTLSSelfSigned stays in -short)")
	t.Parallel()
	check := cabinettest.NewMCPCheck(t)
	ca := newTestCA(t)
	dir := cabinettest.TempDir(t, "tls")
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.pem, 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, nil, "cabinet.mcp.tls_cert_file=/userdata/system/tls/cabinet.crt", "cabinet.mcp.tls_key_file=/userdata/system/tls/cabinet.key")
	certFile, keyFile := r.cab.Path("/userdata/system/tls/cabinet.crt"), r.cab.Path("/userdata/system/tls/cabinet.key")
	os.MkdirAll(filepath.Dir(certFile), 0o700)
	certPEM, keyPEM := ca.issue(t, 1)
	replace(t, certFile, certPEM)
	replace(t, keyFile, keyPEM)
	r.start().waitLog("MCP over HTTP listening", 20*time.Second)
	base := r.mcpURL()
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("MCP URL %s, want https://", base)
	}
	addr := strings.TrimPrefix(base, "https://")
	token := r.token()

	start := time.Now()
	out, stderr, code := check.Run(t, 2*time.Minute, append(os.Environ(), "NODE_EXTRA_CA_CERTS="+caFile),
		"--strict", "--url", base+"/mcp", "--token", token, "--expect-tool", "batocera_get_status",
		"--call", "batocera_get_status", "--fail-on-tool-error")
	var rep cabinettest.MCPReport
	if err := json.Unmarshal(out, &rep); err != nil || code != 0 || !rep.OK || len(rep.Warnings) != 0 {
		t.Fatalf("mcpcheck over https: exit %d, %v, report %s\nstderr: %s", code, err, out, stderr)
	}
	t.Logf("mcpcheck --strict over TLS with a test CA: %v", time.Since(start).Round(time.Millisecond))
	// Without the CA, the same client refuses the certificate: the run
	// above checked it.
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "NODE_EXTRA_CA_CERTS=") {
			env = append(env, e)
		}
	}
	if _, _, code := check.Run(t, 2*time.Minute, env, "--url", base+"/mcp", "--token", token); code == 0 {
		t.Error("mcpcheck trusted the test CA's certificate without being given the CA")
	}

	plain := &http.Client{Timeout: 10 * time.Second}
	if got, err := initializeWith(plain, "http://"+addr+"/mcp", token); err != nil || got.status != 200 {
		t.Errorf("plain HTTP on the same port: %v %+v, want 200", err, got)
	}
	if status, detail := doctorCheck(t, r, "mcp-tls"); status != "ok" || !strings.HasPrefix(detail, "files (CN=cabinet.tail0000.ts.net, expires in 89 days)") {
		t.Errorf("doctor mcp-tls: %s %q", status, detail)
	}

	// The renewal: new files renamed over the old, as tailscale cert does.
	certPEM, keyPEM = ca.issue(t, 2)
	replace(t, keyFile, keyPEM)
	replace(t, certFile, certPEM)
	cabinettest.Await(t, "the renewed certificate at the next handshake", nil, func() (bool, string) {
		leaf, err := served(addr, "127.0.0.1", ca.pool)
		if err != nil {
			return false, err.Error()
		}
		return leaf.SerialNumber.Int64() == 2, fmt.Sprintf("serial %d", leaf.SerialNumber.Int64())
	})

	secure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool}}}
	if got, err := initializeWith(secure, base+"/mcp", token); err != nil || got.status != 200 {
		t.Errorf("https after the renewal: %v %+v, want 200", err, got)
	}
	if n := r.d.log.Count("MCP over HTTPS: serving a new certificate"); n != 1 {
		t.Errorf("%d log lines about the new certificate, want 1", n)
	}
}

// TestRemoteTLSSelfSigned: with cabinet.mcp.tls=self-signed and
// tls_only=1, the daemon makes a certificate for its names (127.0.0.1
// among them) whose SHA-256 doctor and the log show as the one served;
// plain HTTP is refused with a hint to use https.
func TestRemoteTLSSelfSigned(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil, "cabinet.mcp.tls=self-signed", "cabinet.mcp.tls_only=1")
	d := r.start()
	d.waitLog("MCP over HTTP listening", 20*time.Second)
	base := r.mcpURL()
	addr := strings.TrimPrefix(base, "https://")
	leaf, err := served(addr, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(leaf.Raw)
	var fp []string
	for _, b := range sum {
		fp = append(fp, fmt.Sprintf("%02X", b))
	}
	want := strings.Join(fp, ":")
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	if _, err := served(addr, "127.0.0.1", pool); err != nil {
		t.Errorf("the self-signed certificate, once trusted, does not verify for 127.0.0.1: %v", err)
	}
	if status, detail := doctorCheck(t, r, "mcp-tls"); status != "ok" || !strings.HasPrefix(detail, "self-signed (SHA-256 "+want+", expires in ") || !strings.HasSuffix(detail, "no plain HTTP (cabinet.mcp.tls_only)") {
		t.Errorf("doctor mcp-tls: %s %q, want the served certificate's SHA-256 %s", status, detail, want)
	}
	if !strings.Contains(r.logs.String(), `"fingerprint":"`+want+`"`) {
		t.Errorf("the listening line does not show the fingerprint %s", want)
	}
	secure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	if got, err := initializeWith(secure, base+"/mcp", r.token()); err != nil || got.status != 200 {
		t.Errorf("https with the self-signed certificate trusted: %v %+v, want 200", err, got)
	}
	got, err := initializeWith(&http.Client{Timeout: 10 * time.Second}, "http://"+addr+"/mcp", r.token())
	if err != nil || got.status != 400 || !strings.Contains(got.body, "use https://") {
		t.Errorf("plain HTTP with tls_only: %v %+v, want 400 saying to use https://", err, got)
	}
}
