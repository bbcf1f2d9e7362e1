package tlsconf

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// testCA is a CA the test trusts, issuing leaves for localhost and 127.0.0.1.
type testCA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
	pool    *x509.CertPool
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newCA(t testing.TB) *testCA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1000),
		Subject:               pkix.Name{CommonName: "test CA"},
		NotBefore:             time.Now().Add(-48 * time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// leaf is an issued certificate as the files hold it.
type leaf struct {
	certPEM, keyPEM []byte // the cert file is a chain: leaf, then the CA
	der             []byte
}

// issue makes a leaf with the given serial, valid until notAfter.
func (ca *testCA) issue(t testing.TB, serial int64, notAfter time.Time) leaf {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "cabinet.test.ts.net"},
		NotBefore:    time.Now().Add(-24 * time.Hour),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "cabinet.test.ts.net"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key) // "EC PRIVATE KEY", as tailscale cert writes
	if err != nil {
		t.Fatal(err)
	}
	chain := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), ca.certPEM...)
	return leaf{certPEM: chain, keyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), der: der}
}

// pairFiles writes l to dir/cert.pem and dir/key.pem.
func pairFiles(t *testing.T, dir string, l leaf) (certPath, keyPath string) {
	t.Helper()
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeInPlace(t, certPath, l.certPEM)
	writeInPlace(t, keyPath, l.keyPEM)
	return certPath, keyPath
}

// writeInPlace truncates and rewrites the file, keeping its inode.
func writeInPlace(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeRename writes a new file beside path and renames it over path.
func writeRename(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// atomicTime is a clock a test moves while the watcher reads it.
type atomicTime struct{ ns atomic.Int64 }

func (a *atomicTime) set(t time.Time) { a.ns.Store(t.UnixNano()) }
func (a *atomicTime) get() time.Time  { return time.Unix(0, a.ns.Load()) }

// recorder collects what a Source reports, for tests to wait on.
type recorder struct {
	mu      sync.Mutex
	errs    []error
	reloads []Info
	changed chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1)} }

func (r *recorder) onError(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
	r.poke()
}

func (r *recorder) onReload(i Info) {
	r.mu.Lock()
	r.reloads = append(r.reloads, i)
	r.mu.Unlock()
	r.poke()
}

func (r *recorder) poke() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) snapshot() ([]error, []Info) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...), append([]Info(nil), r.reloads...)
}

// waitFor waits until cond holds for what has been reported.
func (r *recorder) waitFor(t *testing.T, what string, cond func(errs []error, reloads []Info) bool) {
	t.Helper()
	cabinettest.Await(t, what, func() <-chan struct{} { return r.changed }, func() (bool, string) {
		errs, reloads := r.snapshot()
		return cond(errs, reloads), fmt.Sprintf("errors %v, reloads %d", errs, len(reloads))
	})
}

// waitReload waits for OnReload to report the certificate with fingerprint fp.
func (r *recorder) waitReload(t *testing.T, fp string) {
	t.Helper()
	r.waitFor(t, "a reload of "+fp, func(_ []error, reloads []Info) bool {
		for _, i := range reloads {
			if i.Fingerprint == fp {
				return true
			}
		}
		return false
	})
}

// with wires the recorder into opts.
func (r *recorder) with(opts Options) Options {
	opts.OnError, opts.OnReload = r.onError, r.onReload
	return opts
}

// open opens a Source whose watcher stops, and has stopped, by the end of
// the test, so no callback runs after it.
func open(t *testing.T, opts Options) *Source {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Open(ctx, opts)
	if err != nil {
		cancel()
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.Done():
		case <-time.After(cabinettest.Deadline):
			t.Error("the watcher did not stop")
		}
	})
	return s
}

// serve runs an HTTPS server on 127.0.0.1 with cfg and returns its address.
// The listener is wrapped here rather than by StartTLS, which would add
// httptest's own certificate: crypto/tls prefers that to GetCertificate for
// a client that sends no server name (one dialling an IP address).
func serve(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected
	srv.Listener = tls.NewListener(srv.Listener, cfg)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// peer handshakes with addr as a client verifying against roots and returns
// the certificate the server presented. An empty serverName sends no SNI and
// verifies the IP address.
func peer(t *testing.T, addr, serverName string, roots *x509.CertPool) *x509.Certificate {
	t.Helper()
	if serverName == "" {
		serverName, _, _ = net.SplitHostPort(addr)
	}
	return peerWith(t, addr, &tls.Config{RootCAs: roots, ServerName: serverName})
}

// peerWith handshakes with addr as a client with cfg.
func peerWith(t *testing.T, addr string, cfg *tls.Config) *x509.Certificate {
	t.Helper()
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: cabinettest.Deadline}, Config: cfg}
	ctx, cancel := context.WithTimeout(context.Background(), cabinettest.Deadline)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatalf("handshake with %s as %s: %v", addr, cfg.ServerName, err)
	}
	defer c.Close()
	return c.(*tls.Conn).ConnectionState().PeerCertificates[0]
}
