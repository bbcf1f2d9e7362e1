package tlsconf

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// listenServe serves a handler that answers its scheme and protocol on a
// Listen listener over 127.0.0.1, and returns the address.
func listenServe(t *testing.T, cfg *tls.Config, opts ListenOptions) string {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Listen(inner, cfg, opts)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		io.WriteString(w, scheme+" "+r.Proto)
	}), ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

func getBody(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestListenSniffs: one port serves HTTPS (HTTP/2 and HTTP/1.1) and, unless
// told not to, plain HTTP; with Plain off a plain request is answered 400
// saying to use https. A client that connects and says nothing holds up no
// other connection.
func TestListenSniffs(t *testing.T) {
	ca, dir := newCA(t), t.TempDir()
	certPath, keyPath := pairFiles(t, dir, ca.issue(t, 1, time.Now().Add(90*24*time.Hour)))
	src := open(t, Options{CertFile: certPath, KeyFile: keyPath, NoWatch: true})
	h2 := &http.Client{Timeout: cabinettest.Deadline, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool}, ForceAttemptHTTP2: true}}
	h1 := &http.Client{Timeout: cabinettest.Deadline, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool}}}
	plain := &http.Client{Timeout: cabinettest.Deadline}
	tests := []struct {
		name  string
		opts  ListenOptions
		plain int // status of a plain request
	}{
		{name: "TLS and plain", opts: ListenOptions{Plain: true}, plain: 200},
		{name: "TLS only", opts: ListenOptions{}, plain: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := listenServe(t, src.Config(), tt.opts)
			silent, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer silent.Close()
			if code, body := getBody(t, h2, "https://"+addr+"/"); code != 200 || body != "https "+h2Proto() {
				t.Errorf("HTTPS with h2: %d %q, want 200 https %s", code, body, h2Proto())
			}
			if code, body := getBody(t, h1, "https://"+addr+"/"); code != 200 || body != "https HTTP/1.1" {
				t.Errorf("HTTPS with HTTP/1.1: %d %q, want 200 https HTTP/1.1", code, body)
			}
			code, body := getBody(t, plain, "http://"+addr+"/")
			switch {
			case code != tt.plain:
				t.Errorf("plain HTTP: %d %q, want %d", code, body, tt.plain)
			case code == 200 && body != "http HTTP/1.1":
				t.Errorf("plain HTTP: %q, want http HTTP/1.1", body)
			case code == 400 && !strings.Contains(body, "use https://"):
				t.Errorf("plain HTTP refused with %q, want it to say to use https://", body)
			}
		})
	}
}

// TestListenSniffTimeout: a connection that sends nothing is closed after
// SniffTimeout, and Close makes Accept return net.ErrClosed.
func TestListenSniffTimeout(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Listen(inner, &tls.Config{}, ListenOptions{Plain: true, SniffTimeout: 50 * time.Millisecond})
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(cabinettest.Deadline))
	if _, err := bufio.NewReader(c).ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("silent connection: read %v, want EOF (closed by the listener)", err)
	}
	accepted := make(chan error, 1)
	go func() {
		_, err := ln.Accept()
		accepted <- err
	}()
	ln.Close()
	select {
	case err := <-accepted:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(cabinettest.Deadline):
		t.Fatal("Accept did not return after Close")
	}
}
