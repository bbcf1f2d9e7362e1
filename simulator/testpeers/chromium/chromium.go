// Package chromium drives Debian's real headless Chromium from Go tests,
// for testing the web pages the cabinet serves (the OAuth consent page):
// navigate, fill and submit forms, evaluate JavaScript, read cookies, take
// screenshots, emulate a phone. It speaks the Chrome DevTools Protocol over
// --remote-debugging-pipe (NUL-terminated JSON on file descriptors 3 and
// 4), so no debugging port is opened and no websocket library is needed.
// Test code only; Debian package chromium (156 on bookworm).
//
// Isolation: a fresh profile, HOME and TMPDIR per browser, and the flags
// in isolationFlags. Those flags alone do not keep Chromium quiet: it
// still asks clients2.google.com for the time, update.googleapis.com for
// updates and accounts.google.com for accounts. What stops them is the
// host resolver rules, which resolve nothing but 127.0.0.1, localhost and
// Options.Hosts; and after a failed name lookup Chromium probes DNS for
// google.com past those rules (the system's servers and 8.8.8.8), which
// the seeded preference alternate_error_pages off stops. A net log
// (ExtraArgs --log-net-log=FILE) of a browser left 40 seconds on a test
// page and a public name shows no DNS query and no connection but to
// loopback.
//
// Trusting a test server's certificate: pass it in Options.TrustCerts.
// Chromium then accepts any chain the server presents that holds a
// certificate with the same public key (--ignore-certificate-errors-spki-list,
// honoured only together with --user-data-dir) and reports the connection
// "secure": a secure context, Secure and SameSite=Strict cookies kept. The
// certificate must be one the server sends (its leaf, or an intermediate
// in its chain): a root the server does not send is never matched. The
// match stands in for verification: a name the certificate does not hold
// passes too (check names with crypto/x509 instead).
//
// Content-Security-Policy form-action applies to the redirects after a
// form POST too: a consent page with form-action 'self' that answers 303
// to a callback on another origin (http://127.0.0.1:PORT/callback) is
// blocked, Submit reports NetError net::ERR_ABORTED and the console a
// form-action violation. List the callback's origin in form-action
// (form-action 'self' http://127.0.0.1:*).
package chromium

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// install is the Debian command that installs the peer.
const install = "apt-get install -y --no-install-recommends chromium"

// Binary finds the Chromium executable. On Debian that is
// /usr/lib/chromium/chromium, run directly: the /usr/bin/chromium wrapper
// script adds flags of its own (remote extensions, Google API keys).
func Binary() (string, error) {
	for _, p := range []string{"/usr/lib/chromium/chromium"} {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("chromium is not installed (Debian: %s)", install)
}

// Require returns the path of Chromium, or skips t (fails it under
// CABINET_REQUIRE_PEERS=1) when it is not installed.
func Require(t testing.TB) string {
	t.Helper()
	p, err := Binary()
	peertest.RequirePeer(t, err)
	return p
}

// Options configure a browser.
type Options struct {
	// TrustCerts are certificates whose public keys Chromium accepts in a
	// server's chain in place of a trusted root: the test server's leaf
	// (or an intermediate it sends). For an httptest.Server,
	// srv.Certificate().
	TrustCerts []*x509.Certificate
	// Hosts are host names that resolve to 127.0.0.1 ("cabinet.test"),
	// so a test server on loopback can be reached under a name. Chromium
	// treats 127.0.0.1 and localhost as secure contexts even over plain
	// HTTP; under a name only HTTPS makes one, as on a real network.
	Hosts []string
	// CallTimeout bounds each DevTools call whose context has no deadline
	// (Navigate, Submit: the whole navigation). Default 30s.
	CallTimeout time.Duration
	// ExtraArgs are appended to the command line, for diagnosis
	// (--log-net-log=FILE).
	ExtraArgs []string
}

// isolationFlags are the flags the peer's issue demands, so that Chromium
// contacts nothing on its own (see the package comment for what they leave
// to the host resolver rules).
var isolationFlags = []string{
	"--headless",   // the new headless mode: the full browser, no window
	"--no-sandbox", // CI runs as root, where the sandbox refuses to start
	"--disable-gpu",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-quic",
	"--no-first-run",
}

// hostRules resolve nothing but loopback and hosts (to 127.0.0.1): a page
// that names any other host fails with ERR_NAME_NOT_RESOLVED instead of
// reaching the network. The first matching MAP wins.
func hostRules(hosts []string) (string, error) {
	var rules []string
	for _, h := range hosts {
		if h == "" || strings.ContainsAny(h, " ,*:/") {
			return "", fmt.Errorf("hosts: %q is not a host name", h)
		}
		rules = append(rules, "MAP "+h+" 127.0.0.1")
	}
	rules = append(rules, "MAP * ~NOTFOUND", "EXCLUDE localhost", "EXCLUDE 127.0.0.1")
	return strings.Join(rules, ", "), nil
}

// args is the command line after the executable.
func args(profile string, opts Options) ([]string, error) {
	rules, err := hostRules(opts.Hosts)
	if err != nil {
		return nil, err
	}
	a := append([]string(nil), isolationFlags...)
	a = append(a,
		"--user-data-dir="+profile,
		"--remote-debugging-pipe",
		"--host-resolver-rules="+rules,
		"--no-default-browser-check",
		"--disable-extensions",
		"--disable-default-apps",
		"--disable-domain-reliability",
		"--disable-client-side-phishing-detection",
		"--disable-auto-reload",  // an error page would retry its URL by itself
		"--password-store=basic", // no keyring over D-Bus
		"--mute-audio",
		"--disable-dev-shm-usage", // small /dev/shm in containers
		"--lang=en-US",            // Accept-Language and validation messages
	)
	if len(opts.TrustCerts) > 0 {
		spki, err := spkiHashes(opts.TrustCerts)
		if err != nil {
			return nil, err
		}
		a = append(a, "--ignore-certificate-errors-spki-list="+strings.Join(spki, ","))
	}
	a = append(a, opts.ExtraArgs...)
	return append(a, "about:blank"), nil
}

// spkiHashes are the base64 SHA-256 hashes of the certificates' public
// keys, the form --ignore-certificate-errors-spki-list takes.
func spkiHashes(certs []*x509.Certificate) ([]string, error) {
	out := make([]string, 0, len(certs))
	for _, c := range certs {
		if c == nil || len(c.RawSubjectPublicKeyInfo) == 0 {
			return nil, errors.New("trust certificate: no public key (nil certificate?)")
		}
		sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
		out = append(out, base64.StdEncoding.EncodeToString(sum[:]))
	}
	return out, nil
}

// preferences seed the profile. alternate_error_pages off stops the DNS
// probe Chromium runs after a failed name lookup (it asks the system's DNS
// servers and 8.8.8.8 for google.com, past --host-resolver-rules).
const preferences = `{"alternate_error_pages": {"enabled": false}}`

func writePreferences(profile string) error {
	dir := filepath.Join(profile, "Default")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("seed profile: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Preferences"), []byte(preferences), 0o600); err != nil {
		return fmt.Errorf("seed profile: %w", err)
	}
	return nil
}
