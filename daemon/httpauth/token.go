package httpauth

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// minTokenLen: shorter tokens are refused (a user may write the file).
const minTokenLen = 32

// randomToken is 32 random bytes, base64url: 43 characters.
func randomToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// NewToken writes a new random default token to path with mode 0600 and
// returns it.
func NewToken(path string) (string, error) {
	tok, err := randomToken()
	if err != nil {
		return "", fmt.Errorf("new token: %w", err)
	}
	if err := WriteFileAtomic(path, []byte(tok+"\n")); err != nil {
		return "", fmt.Errorf("new token: %w", err)
	}
	return tok, nil
}

// WriteFileAtomic replaces path with data (mode 0600): a temporary file,
// fsynced, then renamed over it, so a reader sees the old file or the new
// one, never half of one.
func WriteFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	f.Chmod(0o600) // an older .tmp may have another mode
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// ErrNoToken means no token has been created yet.
var ErrNoToken = errors.New("no MCP token yet: run `cabinet token new`")

// ReadToken reads the default token's file.
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", ErrNoToken
	}
	if err != nil {
		return "", fmt.Errorf("read token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < minTokenLen {
		return "", fmt.Errorf("the token in %s is shorter than %d characters: run `cabinet token new`", path, minTokenLen)
	}
	return tok, nil
}

// EnsureToken returns the default token, creating one the first time.
func EnsureToken(path string) (string, error) {
	tok, err := ReadToken(path)
	if errors.Is(err, ErrNoToken) {
		return NewToken(path)
	}
	return tok, err
}
