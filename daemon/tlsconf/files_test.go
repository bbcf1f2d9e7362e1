package tlsconf

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// A renewal replaces both files while the server runs; the next handshake
// gets the new certificate, however the files were replaced.
func TestFilesReplacedWhileServing(t *testing.T) {
	tests := []struct {
		name    string
		replace func(t *testing.T, path string, data []byte)
	}{
		{"rewritten in place", writeInPlace},
		{"written then renamed", writeRename},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca, dir := newCA(t), t.TempDir()
			old := ca.issue(t, 1, time.Now().Add(90*24*time.Hour))
			certPath, keyPath := pairFiles(t, dir, old)
			rec := newRecorder()
			// A poll of an hour: only fsnotify can see the change in time.
			src := open(t, rec.with(Options{CertFile: certPath, KeyFile: keyPath, CheckEvery: time.Hour}))
			addr := serve(t, src.Config())

			if got := peer(t, addr, "", ca.pool).SerialNumber.Int64(); got != 1 {
				t.Fatalf("serial before = %d; want 1", got)
			}
			renewed := ca.issue(t, 2, time.Now().Add(180*24*time.Hour))
			tt.replace(t, certPath, renewed.certPEM)
			tt.replace(t, keyPath, renewed.keyPEM)

			rec.waitReload(t, Fingerprint(renewed.der))
			if got := peer(t, addr, "localhost", ca.pool).SerialNumber.Int64(); got != 2 {
				t.Errorf("serial after = %d; want 2", got)
			}
			if got, want := src.Info().Fingerprint, Fingerprint(renewed.der); got != want {
				t.Errorf("Info().Fingerprint = %s; want %s", got, want)
			}
		})
	}
}

// A new certificate beside the old key does not load: the old pair is
// served and the error reported until the key follows.
func TestFilesHalfReplaced(t *testing.T) {
	ca, dir := newCA(t), t.TempDir()
	old := ca.issue(t, 1, time.Now().Add(90*24*time.Hour))
	certPath, keyPath := pairFiles(t, dir, old)
	rec := newRecorder()
	src := open(t, rec.with(Options{CertFile: certPath, KeyFile: keyPath, CheckEvery: time.Hour}))
	addr := serve(t, src.Config())

	renewed := ca.issue(t, 2, time.Now().Add(180*24*time.Hour))
	writeRename(t, certPath, renewed.certPEM)
	rec.waitFor(t, "a reload error", func(errs []error, _ []Info) bool { return len(errs) > 0 })
	errs, reloads := rec.snapshot()
	if msg := errs[0].Error(); !strings.Contains(msg, "not one key pair") || !strings.Contains(msg, "still serving the previous certificate") {
		t.Errorf("error = %q; want it to say the pair does not match and the previous certificate is served", msg)
	}
	if len(reloads) != 0 {
		t.Errorf("reloads = %d; want none", len(reloads))
	}
	if got := peer(t, addr, "", ca.pool).SerialNumber.Int64(); got != 1 {
		t.Errorf("serial while half replaced = %d; want 1", got)
	}

	writeRename(t, keyPath, renewed.keyPEM)
	rec.waitReload(t, Fingerprint(renewed.der))
	if got := peer(t, addr, "", ca.pool).SerialNumber.Int64(); got != 2 {
		t.Errorf("serial after the key = %d; want 2", got)
	}
}

// Where fsnotify is silent, the poll of size and mtime sees the renewal.
func TestFilesPolledWithoutWatch(t *testing.T) {
	ca, dir := newCA(t), t.TempDir()
	certPath, keyPath := pairFiles(t, dir, ca.issue(t, 1, time.Now().Add(90*24*time.Hour)))
	rec := newRecorder()
	src := open(t, rec.with(Options{CertFile: certPath, KeyFile: keyPath, NoWatch: true, CheckEvery: 20 * time.Millisecond}))
	addr := serve(t, src.Config())

	renewed := ca.issue(t, 2, time.Now().Add(180*24*time.Hour))
	writeRename(t, certPath, renewed.certPEM)
	writeRename(t, keyPath, renewed.keyPEM)
	rec.waitReload(t, Fingerprint(renewed.der))
	if got := peer(t, addr, "", ca.pool).SerialNumber.Int64(); got != 2 {
		t.Errorf("serial after the poll = %d; want 2", got)
	}
}

// The configuration speaks HTTP/2 and HTTP/1.1 (a release build, without HTTP/2 in net/http,
// answers a client offering h2 in HTTP/1.1).
func TestConfigProtocols(t *testing.T) {
	ca, dir := newCA(t), t.TempDir()
	certPath, keyPath := pairFiles(t, dir, ca.issue(t, 1, time.Now().Add(90*24*time.Hour)))
	src := open(t, Options{CertFile: certPath, KeyFile: keyPath})
	addr := serve(t, src.Config())
	if got := src.Config().MinVersion; got != tls.VersionTLS12 {
		t.Errorf("MinVersion = %x; want TLS 1.2", got)
	}
	tests := []struct {
		name      string
		h2        bool
		wantProto string
	}{
		{"h2", true, h2Proto()},
		{"http/1.1", false, "HTTP/1.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool}, ForceAttemptHTTP2: tt.h2}
			if !tt.h2 {
				tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
			}
			defer tr.CloseIdleConnections()
			ctx, cancel := context.WithTimeout(context.Background(), cabinettest.Deadline)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/", nil)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if string(body) != tt.wantProto {
				t.Errorf("server saw %q; want %q", body, tt.wantProto)
			}
		})
	}
}

// Files unusable at start fail Open with an error naming the key to fix.
func TestOpenErrors(t *testing.T) {
	ca := newCA(t)
	good, other := ca.issue(t, 1, time.Now().Add(90*24*time.Hour)), ca.issue(t, 2, time.Now().Add(90*24*time.Hour))
	big := bytes.Repeat([]byte("A"), maxFileBytes+1)
	tests := []struct {
		name     string
		opts     func(dir string) Options
		want     []string
		notExist bool
	}{
		{"no mode", func(string) Options { return Options{} },
			[]string{"cabinet.mcp.tls_cert_file", "cabinet.mcp.tls_key_file", "cabinet.mcp.tls=self-signed"}, false},
		{"both modes", func(dir string) Options {
			c, k := pairFiles(t, dir, good)
			return Options{CertFile: c, KeyFile: k, SelfSignedDir: dir}
		}, []string{"both set", "cabinet.mcp.tls_cert_file"}, false},
		{"cert without key", func(dir string) Options {
			c, _ := pairFiles(t, dir, good)
			return Options{CertFile: c}
		}, []string{"cabinet.mcp.tls_key_file is not", "set both"}, false},
		{"missing cert file", func(dir string) Options {
			_, k := pairFiles(t, dir, good)
			return Options{CertFile: filepath.Join(dir, "absent.pem"), KeyFile: k}
		}, []string{"cabinet.mcp.tls_cert_file", "absent.pem", "does not exist"}, true},
		{"missing key file", func(dir string) Options {
			c, _ := pairFiles(t, dir, good)
			return Options{CertFile: c, KeyFile: filepath.Join(dir, "absent.key")}
		}, []string{"cabinet.mcp.tls_key_file", "absent.key", "does not exist"}, true},
		{"oversized cert file", func(dir string) Options {
			c, k := pairFiles(t, dir, good)
			writeInPlace(t, c, big)
			return Options{CertFile: c, KeyFile: k}
		}, []string{"cabinet.mcp.tls_cert_file", "larger than 1 MiB"}, false},
		{"oversized key file", func(dir string) Options {
			c, k := pairFiles(t, dir, good)
			writeInPlace(t, k, append(good.keyPEM, big...))
			return Options{CertFile: c, KeyFile: k}
		}, []string{"cabinet.mcp.tls_key_file", "larger than 1 MiB"}, false},
		{"key of another certificate", func(dir string) Options {
			c, k := pairFiles(t, dir, good)
			writeInPlace(t, k, other.keyPEM)
			return Options{CertFile: c, KeyFile: k}
		}, []string{"cabinet.mcp.tls_cert_file", "cabinet.mcp.tls_key_file", "not one key pair"}, false},
		{"not PEM", func(dir string) Options {
			c, k := pairFiles(t, dir, good)
			writeInPlace(t, c, []byte("hello"))
			return Options{CertFile: c, KeyFile: k}
		}, []string{"cabinet.mcp.tls_cert_file", "not one key pair"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s, err := Open(ctx, tt.opts(t.TempDir()))
			if err == nil {
				cancel()
				<-s.Done()
				t.Fatal("Open succeeded; want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error = %q; want it to contain %q", err, w)
				}
			}
			if got := errors.Is(err, fs.ErrNotExist); got != tt.notExist {
				t.Errorf("errors.Is(err, fs.ErrNotExist) = %v; want %v", got, tt.notExist)
			}
		})
	}
}

// A certificate close to its end is served and reported, at Open and again
// once a day while nothing renews it.
func TestFilesExpiryWarning(t *testing.T) {
	start := time.Now()
	tests := []struct {
		name        string
		left        time.Duration
		wantWarn    bool
		wantExpired bool
	}{
		{"20 days left", 20 * 24 * time.Hour, false, false},
		{"10 days left", 10 * 24 * time.Hour, true, false},
		{"expired an hour ago", -time.Hour, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca, dir := newCA(t), t.TempDir()
			certPath, keyPath := pairFiles(t, dir, ca.issue(t, 1, start.Add(tt.left)))
			rec := newRecorder()
			open(t, rec.with(Options{CertFile: certPath, KeyFile: keyPath, Now: func() time.Time { return start }}))
			errs, _ := rec.snapshot() // Open reports before it returns
			if !tt.wantWarn {
				if len(errs) != 0 {
					t.Errorf("errors = %v; want none", errs)
				}
				return
			}
			var ee *ExpiryError
			if len(errs) != 1 || !errors.As(errs[0], &ee) {
				t.Fatalf("errors = %v; want one *ExpiryError", errs)
			}
			if ee.Expired() != tt.wantExpired || ee.Source != certPath {
				t.Errorf("ExpiryError = %+v (expired %v); want expired %v, source %s", ee, ee.Expired(), tt.wantExpired, certPath)
			}
		})
	}
}

func TestFilesExpiryWarningRepeatsDaily(t *testing.T) {
	start := time.Now()
	ca, dir := newCA(t), t.TempDir()
	certPath, keyPath := pairFiles(t, dir, ca.issue(t, 1, start.Add(10*24*time.Hour)))
	var clock atomicTime
	clock.set(start)
	rec := newRecorder()
	open(t, rec.with(Options{CertFile: certPath, KeyFile: keyPath, Now: clock.get, NoWatch: true, CheckEvery: 10 * time.Millisecond}))
	rec.waitFor(t, "the warning at Open", func(errs []error, _ []Info) bool { return len(errs) == 1 })
	clock.set(start.Add(25 * time.Hour))
	rec.waitFor(t, "the warning a day later", func(errs []error, _ []Info) bool { return len(errs) == 2 })
}

// Events on other files in the watched directories (a whole
// /userdata/system) do not postpone or cause a reload.
func TestFilesOtherFilesIgnored(t *testing.T) {
	dir := t.TempDir()
	s := &Source{files: pairPaths{cert: filepath.Join(dir, "c.pem"), key: filepath.Join(dir, "k.pem")}}
	tests := []struct {
		name string
		want bool
	}{
		{filepath.Join(dir, "c.pem"), true},
		{filepath.Join(dir, "k.pem"), true},
		{dir + "/./k.pem", true},
		{filepath.Join(dir, ".c.pem.1234.tmp"), false},
		{filepath.Join(dir, "batocera.conf"), false},
		{dir, false},
	}
	for _, tt := range tests {
		if got := s.concerns(tt.name); got != tt.want {
			t.Errorf("concerns(%s) = %v; want %v", tt.name, got, tt.want)
		}
	}
}

// h2Proto is the protocol a client offering h2 gets: HTTP/2, unless the build leaves it out
// (nethttpomithttp2, release builds).
func h2Proto() string {
	if slices.Contains(alpn, "h2") {
		return "HTTP/2.0"
	}
	return "HTTP/1.1"
}
