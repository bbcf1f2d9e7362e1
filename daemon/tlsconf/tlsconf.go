// Package tlsconf owns the certificate of the daemon's MCP HTTP server. It
// has two sources: PEM files named by cabinet.mcp.tls_cert_file and
// cabinet.mcp.tls_key_file (typically `tailscale cert` output, replaced on
// disk every ~90 days), which are re-read while the server runs; or, with
// cabinet.mcp.tls=self-signed, a key and certificate it makes once in the
// state dir and keeps. Either way the server's tls.Config asks the Source for
// the current pair on every handshake, so a renewal never needs a restart.
//
// File changes are seen through fsnotify on the files' directories (renames
// replace the file, so watching the file itself would lose the watch), with
// a size+mtime poll as the fallback for file systems where inotify is silent
// (exFAT over FUSE on /userdata, network shares). A pair that does not load
// (a renewal half done, a mismatch, a file gone) never replaces the one being
// served: the error goes to Options.OnError and the next change is tried.
//
// Listen serves that certificate and, unless told not to, plain HTTP on one
// listener, telling them apart by each connection's first byte, so that one
// cabinet.mcp.listen address answers both http:// and https://.
//
// The package logs nothing; it reports through the callbacks it is given.
package tlsconf

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// The configuration keys named in errors, so a user knows what to fix.
const (
	keyCertFile = "cabinet.mcp.tls_cert_file"
	keyKeyFile  = "cabinet.mcp.tls_key_file"
	keyMode     = "cabinet.mcp.tls=self-signed"
)

const (
	// maxFileBytes bounds each PEM file read. A Tailscale or Let's Encrypt
	// chain is under 10 KiB; anything near this is not a certificate.
	maxFileBytes = 1 << 20
	// settleDelay is how long the files must be quiet before they are read:
	// cert and key are replaced one after the other, and reading between
	// the two gives a pair that does not match.
	settleDelay = 250 * time.Millisecond
	// defaultCheckEvery is the fallback poll for file systems where
	// fsnotify does not fire.
	defaultCheckEvery = time.Minute
	// rewarnEvery spaces repeated expiry warnings and repeated identical
	// renewal failures, so a poll every minute does not flood the log.
	rewarnEvery = 24 * time.Hour
)

// Options configure a Source. Exactly one mode is set: CertFile and KeyFile,
// or SelfSignedDir.
type Options struct {
	// CertFile and KeyFile are PEM files (cabinet.mcp.tls_cert_file and
	// cabinet.mcp.tls_key_file). The cert file may hold a chain, leaf first.
	CertFile, KeyFile string
	// SelfSignedDir is the state dir that keeps the self-signed pair
	// (cabinet.mcp.tls=self-signed); see SelfSignedPaths.
	SelfSignedDir string
	// Hosts are the self-signed certificate's SANs: host names and IP
	// addresses (e.g. hostname, hostname.local, the machine's IPs,
	// localhost, 127.0.0.1, ::1). The first host name that is not
	// localhost names the machine in the CommonName. Empty means
	// localhost, 127.0.0.1 and ::1.
	Hosts []string
	// Now is the clock (default time.Now).
	Now func() time.Time
	// OnError receives reload failures, renewal failures, expiry warnings
	// (*ExpiryError) and the replacement of an unusable self-signed pair.
	// The previous pair is still served whenever it is called. Nil drops them.
	OnError func(error)
	// OnReload receives the Info of each new pair taken after Open, and of
	// a self-signed pair Open had to make. Nil drops them.
	OnReload func(Info)
	// CheckEvery is the fallback poll of the files' size and mtime, and of
	// the self-signed certificate's expiry (default 1 minute).
	CheckEvery time.Duration
	// NoWatch turns fsnotify off, leaving only the poll (tests; file
	// systems known not to notify).
	NoWatch bool
}

// Source hands out the current certificate. Its methods are safe for
// concurrent use. The callbacks run on one goroutine, one at a time, so they
// should return quickly.
type Source struct {
	now        func() time.Time
	onError    func(error)
	onReload   func(Info)
	checkEvery time.Duration
	noWatch    bool
	files      pairPaths // the files mode's, or the self-signed pair's
	selfSigned bool
	hosts      []string

	cur  atomic.Pointer[pair]
	done chan struct{}

	// Owned by the goroutine running watch (and by Open before it starts).
	stamps   [2]stamp
	warnedFP string
	warnedAt time.Time
	failMsg  string
	failAt   time.Time
}

// Open loads the pair now and keeps it current until ctx ends. It fails when
// the options are inconsistent, when the files are unusable at start (the
// error names the key to fix), or when a self-signed pair can neither be
// read nor written. An expired or expiring certificate is not an error: it
// is served and reported to OnError.
func Open(ctx context.Context, opts Options) (*Source, error) {
	s, err := newSource(opts)
	if err != nil {
		return nil, err
	}
	// The watch starts before the files are read: made on the watcher's
	// goroutine, it would miss a change in the moment after Open returns
	// until the next poll.
	var w *fsnotify.Watcher
	if !s.selfSigned && !s.noWatch {
		if w, err = s.newWatcher(); err != nil {
			w = nil
			s.onError(fmt.Errorf("mcp tls: certificate files not watched (%w): changes are seen within %s", err, s.checkEvery))
		}
	}
	var p *pair
	if s.selfSigned {
		p, err = s.keepSelfSigned()
	} else {
		s.stamps = s.files.stat()
		p, err = s.files.load()
	}
	if err != nil {
		if w != nil {
			w.Close()
		}
		return nil, fmt.Errorf("mcp tls: %w", err)
	}
	s.cur.Store(p)
	s.warnExpiry(p, true)
	go s.watch(ctx, w)
	return s, nil
}

// newSource checks the options and fills in the defaults.
func newSource(opts Options) (*Source, error) {
	files := opts.CertFile != "" || opts.KeyFile != ""
	switch {
	case files && opts.SelfSignedDir != "":
		return nil, fmt.Errorf("mcp tls: %s and %s are both set: keep one", keyMode, keyCertFile)
	case !files && opts.SelfSignedDir == "":
		return nil, fmt.Errorf("mcp tls: no certificate: set %s and %s, or %s", keyCertFile, keyKeyFile, keyMode)
	case files && opts.CertFile == "":
		return nil, fmt.Errorf("mcp tls: %s is set but %s is not: set both", keyKeyFile, keyCertFile)
	case files && opts.KeyFile == "":
		return nil, fmt.Errorf("mcp tls: %s is set but %s is not: set both", keyCertFile, keyKeyFile)
	}
	s := &Source{
		now:        opts.Now,
		onError:    opts.OnError,
		onReload:   opts.OnReload,
		checkEvery: opts.CheckEvery,
		noWatch:    opts.NoWatch,
		selfSigned: !files,
		hosts:      opts.Hosts,
		done:       make(chan struct{}),
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.onError == nil {
		s.onError = func(error) {}
	}
	if s.onReload == nil {
		s.onReload = func(Info) {}
	}
	if s.checkEvery <= 0 {
		s.checkEvery = defaultCheckEvery
	}
	if files {
		s.files = pairPaths{
			cert: filepath.Clean(opts.CertFile), key: filepath.Clean(opts.KeyFile),
			certName: keyCertFile, keyName: keyKeyFile, source: filepath.Clean(opts.CertFile),
		}
	} else {
		cert, key := SelfSignedPaths(opts.SelfSignedDir)
		s.files = pairPaths{cert: cert, key: key, certName: "the self-signed certificate", keyName: "its key", source: SelfSignedSource}
	}
	return s, nil
}

// Config returns a new server configuration that asks s for the certificate
// on every handshake. Each call returns a fresh value the caller may change.
func (s *Source) Config() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		NextProtos:     slices.Clone(alpn),
		GetCertificate: s.getCertificate,
	}
}

func (s *Source) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if p := s.cur.Load(); p != nil {
		return p.cert, nil
	}
	return nil, errors.New("mcp tls: no certificate loaded")
}

// Info describes the certificate being served now.
func (s *Source) Info() Info {
	return s.cur.Load().info.clone()
}

// Done is closed once the watcher has stopped after ctx ended; no callback
// runs after that.
func (s *Source) Done() <-chan struct{} {
	return s.done
}

// report passes err to OnError, dropping an identical failure repeated
// within rewarnEvery when repeat is set (a renewal retried every poll).
func (s *Source) report(err error, repeat bool) {
	if repeat {
		now := s.now()
		if err.Error() == s.failMsg && now.Sub(s.failAt) < rewarnEvery {
			return
		}
		s.failMsg, s.failAt = err.Error(), now
	}
	s.onError(err)
}

// warnExpiry reports a certificate that expires within WarnWithin: at once
// when force is set (a pair just taken), otherwise once every rewarnEvery.
func (s *Source) warnExpiry(p *pair, force bool) {
	now := s.now()
	err := p.info.Expiry(now)
	if err == nil {
		s.warnedFP = ""
		return
	}
	if !force && s.warnedFP == p.info.Fingerprint && now.Sub(s.warnedAt) < rewarnEvery {
		return
	}
	s.warnedFP, s.warnedAt = p.info.Fingerprint, now
	s.onError(err)
}
