package tlsconf

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
)

// pair is a loaded certificate and what is known about it.
type pair struct {
	cert *tls.Certificate // Leaf set
	info Info
	// sum is the SHA-256 of the files' bytes, so an event that changed
	// nothing (a touch, a rewrite with the same content) takes nothing.
	sum [sha256.Size]byte
}

// pairPaths are a certificate file and its key file, with the names errors
// use for them: the config keys in the files mode.
type pairPaths struct {
	cert, key         string
	certName, keyName string
	source            string // Info.Source
}

// stamp is what the fallback poll compares: a replaced or rewritten file
// changes its size or its mtime.
type stamp struct {
	exists bool
	size   int64
	mtime  int64 // UnixNano
}

func statFile(path string) stamp {
	fi, err := os.Stat(path) // follows a symlink, as the load does
	if err != nil {
		return stamp{}
	}
	return stamp{exists: true, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}

func (pp pairPaths) stat() [2]stamp {
	return [2]stamp{statFile(pp.cert), statFile(pp.key)}
}

// readPart reads one of the pair's files, with an error saying what to fix.
func readPart(path, name string) ([]byte, error) {
	b, err := bounded.ReadFile(path, maxFileBytes)
	configured := strings.HasPrefix(name, "cabinet.") // not the kept self-signed pair
	switch {
	case err == nil:
		return b, nil
	case errors.Is(err, fs.ErrNotExist) && !configured:
		return nil, fmt.Errorf("%s %s does not exist: %w", name, path, err)
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s %s does not exist: check %s, or make the file (e.g. with tailscale cert): %w", name, path, name, err)
	case errors.Is(err, bounded.ErrTooLarge):
		return nil, fmt.Errorf("%s %s is larger than %s: point %s at a PEM file: %w", name, path, bounded.Size(maxFileBytes), name, bounded.ErrTooLarge)
	default:
		return nil, fmt.Errorf("read %s %s: %w", name, path, err)
	}
}

// load reads and checks both files.
func (pp pairPaths) load() (*pair, error) {
	certPEM, err := readPart(pp.cert, pp.certName)
	if err != nil {
		return nil, err
	}
	keyPEM, err := readPart(pp.key, pp.keyName)
	if err != nil {
		return nil, err
	}
	p, err := parsePair(certPEM, keyPEM, pp.source)
	if err != nil {
		return nil, fmt.Errorf("%s %s and %s %s are not one key pair: %w; point both at the same certificate's PEM files (a renewal half done is retried on the next change)",
			pp.certName, pp.cert, pp.keyName, pp.key, err)
	}
	return p, nil
}

// parsePair checks a PEM certificate (chain, leaf first) against its key.
func parsePair(certPEM, keyPEM []byte, source string) (*pair, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	if cert.Leaf == nil { // set by crypto/tls unless GODEBUG x509keypairleaf=0
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, err
		}
	}
	h := sha256.New()
	h.Write(certPEM)
	h.Write([]byte{0})
	h.Write(keyPEM)
	p := &pair{cert: &cert, info: infoOf(cert.Leaf, source)}
	h.Sum(p.sum[:0])
	return p, nil
}

// same tells whether q holds the same files' bytes as p.
func (p *pair) same(q *pair) bool {
	return bytes.Equal(p.sum[:], q.sum[:])
}
