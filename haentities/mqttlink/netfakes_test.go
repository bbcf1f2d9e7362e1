package mqttlink

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// listen opens a loopback listener closed at the end of the test.
func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// closedPort is a loopback address nobody listens on: connecting is refused.
func closedPort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// acceptLoop accepts connections until ln closes, hands each to serve, and
// closes them all at the end of the test.
func acceptLoop(t testing.TB, ln net.Listener, accepted *atomic.Int32, serve func(net.Conn)) {
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go serve(c)
		}
	}()
}

// silentBroker accepts TCP and never writes a byte.
func silentBroker(t testing.TB) (string, *atomic.Int32) {
	ln := listen(t)
	var n atomic.Int32
	acceptLoop(t, ln, &n, func(c net.Conn) { io.Copy(io.Discard, c) })
	return ln.Addr().String(), &n
}

// connackOnlyBroker accepts the MQTT connection and then never acknowledges
// anything.
func connackOnlyBroker(t testing.TB) string {
	ln := listen(t)
	var n atomic.Int32
	acceptLoop(t, ln, &n, func(c net.Conn) {
		if readPacket(c) != nil {
			return
		}
		c.Write([]byte{0x20, 0x02, 0x00, 0x00}) // CONNACK, accepted
		io.Copy(io.Discard, c)
	})
	return ln.Addr().String()
}

// readPacket reads one MQTT control packet (fixed header, remaining length).
func readPacket(r io.Reader) error {
	var b [1]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return err
	}
	n, mult := 0, 1
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return err
		}
		n += int(b[0]&0x7f) * mult
		if b[0]&0x80 == 0 {
			break
		}
		mult *= 128
	}
	_, err := io.CopyN(io.Discard, r, int64(n))
	return err
}

// cutter is a TCP proxy to a broker that can drop every connection
// abruptly (RST, no DISCONNECT: the broker fires the will) and refuse new
// ones until resumed.
type cutter struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	paused bool
	conns  []net.Conn
}

func newCutter(t testing.TB, target string) *cutter {
	c := &cutter{ln: listen(t), target: target}
	var n atomic.Int32
	acceptLoop(t, c.ln, &n, c.serve)
	t.Cleanup(c.Cut)
	return c
}

func (c *cutter) URL() string { return "tcp://" + c.ln.Addr().String() }

func (c *cutter) serve(down net.Conn) {
	c.mu.Lock()
	if c.paused {
		c.mu.Unlock()
		down.Close()
		return
	}
	up, err := net.Dial("tcp", c.target)
	if err != nil {
		c.mu.Unlock()
		down.Close()
		return
	}
	c.conns = append(c.conns, down, up)
	c.mu.Unlock()
	go func() { io.Copy(up, down); up.Close() }()
	io.Copy(down, up)
	down.Close()
}

// Cut drops every connection and refuses new ones until Resume.
func (c *cutter) Cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused = true
	for _, conn := range c.conns {
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		conn.Close()
	}
	c.conns = nil
}

func (c *cutter) Resume() {
	c.mu.Lock()
	c.paused = false
	c.mu.Unlock()
}

// testCA makes a CA and a server certificate for 127.0.0.1, and writes the
// CA as PEM into a temporary file.
func testCA(t testing.TB) (caFile string, server tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cabinet test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "broker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return caFile, tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}
}

// tlsFront terminates TLS on loopback and forwards to a plain broker.
func tlsFront(t testing.TB, target string, cert tls.Certificate) string {
	ln := tls.NewListener(listen(t), &tls.Config{Certificates: []tls.Certificate{cert}})
	var n atomic.Int32
	acceptLoop(t, ln, &n, func(down net.Conn) { pipe(down, target) })
	return ln.Addr().String()
}

func pipe(down net.Conn, target string) {
	up, err := net.Dial("tcp", target)
	if err != nil {
		down.Close()
		return
	}
	go func() { io.Copy(up, down); up.Close() }()
	io.Copy(down, up)
	down.Close()
}

// wsFront serves MQTT over websocket on loopback and forwards to a plain
// broker, as Mosquitto's websocket listener would.
func wsFront(t testing.TB, target string) string {
	ln := listen(t)
	up := websocket.Upgrader{Subprotocols: []string{"mqtt"}}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		broker, err := net.Dial("tcp", target)
		if err != nil {
			return
		}
		defer broker.Close()
		go func() {
			buf := make([]byte, 4096)
			for {
				n, err := broker.Read(buf)
				if err != nil {
					ws.Close()
					return
				}
				if ws.WriteMessage(websocket.BinaryMessage, buf[:n]) != nil {
					return
				}
			}
		}()
		for {
			_, r, err := ws.NextReader()
			if err != nil {
				return
			}
			if _, err := io.Copy(broker, r); err != nil {
				return
			}
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}
