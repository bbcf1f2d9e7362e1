package httpauth

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The named tokens' file holds their SHA-256 hashes, never the tokens, and
// is bounded: MaxTokens named tokens, maxTokensFileBytes in all.
const (
	MaxTokens          = 64
	maxTokensFileBytes = 256 << 10
	maxAddrLen         = 64
	tokensFileVersion  = 1
)

// TokensFile is the named tokens' file, beside the default token's.
func TokensFile(tokenPath string) string {
	return filepath.Join(filepath.Dir(tokenPath), "tokens.json")
}

// maxNameLen bounds a token's name.
const maxNameLen = 32

// ValidName checks a token name: 1 to 32 of a-z, 0-9, _ and -.
func ValidName(name string) error {
	ok := len(name) >= 1 && len(name) <= maxNameLen
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
	}
	if !ok {
		return fmt.Errorf("token name %q: use 1 to 32 of a-z, 0-9, _ and -, such as laptop", name)
	}
	return nil
}

// TokenInfo is one token as `cabinet token list` shows it.
type TokenInfo struct {
	Name     string    `json:"name"`
	SHA256   string    `json:"sha256"` // hex
	Scopes   []string  `json:"scopes"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"last_used,omitzero"`
	LastAddr string    `json:"last_addr,omitempty"` // the direct peer's IP
}

// defaultUse is the default token's last use. Its secret is in its own
// file; SHA256 says which default token the use was of (a new one starts
// unused), and an entry here never authenticates anything.
type defaultUse struct {
	SHA256   string    `json:"sha256"`
	LastUsed time.Time `json:"last_used"`
	LastAddr string    `json:"last_addr,omitempty"`
}

type tokensFile struct {
	Version int         `json:"version"`
	Tokens  []TokenInfo `json:"tokens"`
	Default *defaultUse `json:"default,omitempty"`
}

// parseTokens reads the named tokens' file. Entries that cannot
// authenticate (a bad name or hash, a duplicate, "default", past
// MaxTokens) are dropped; unknown scopes are dropped from an entry.
func parseTokens(b []byte) (tokensFile, error) {
	var f tokensFile
	if len(bytes.TrimSpace(b)) == 0 {
		return tokensFile{Version: tokensFileVersion}, nil
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return tokensFile{}, fmt.Errorf("read the token list: %w", err)
	}
	if f.Version != tokensFileVersion {
		return tokensFile{}, fmt.Errorf("read the token list: version %d, want %d (written by another Cabinet?)", f.Version, tokensFileVersion)
	}
	seen := map[string]bool{}
	kept := f.Tokens[:0]
	for _, t := range f.Tokens {
		if ValidName(t.Name) != nil || t.Name == DefaultName || seen[t.Name] || !validSum(t.SHA256) || len(kept) == MaxTokens {
			continue
		}
		seen[t.Name] = true
		t.Scopes = normalScopes(t.Scopes)
		t.LastAddr = clip(t.LastAddr, maxAddrLen)
		kept = append(kept, t)
	}
	f.Tokens = kept
	if f.Default != nil && !validSum(f.Default.SHA256) {
		f.Default = nil
	}
	return f, nil
}

func validSum(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size && s == strings.ToLower(s)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// sum is a token's SHA-256, as the file keeps it.
func sum(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// Store is the MCP tokens on disk: the default token's own file and the
// named tokens' file. Changes to the named tokens' file are made under a
// lock (flock on Path+".lock") by read, change, atomic replace, so a
// revoke and the daemon's record of a use never undo each other.
type Store struct {
	DefaultPath string // <state_dir>/token
	Path        string // <state_dir>/tokens.json
	Now         func() time.Time
}

// NewStore is the store beside the default token's file.
func NewStore(tokenPath string) *Store {
	return &Store{DefaultPath: tokenPath, Path: TokensFile(tokenPath)}
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// ErrNoSuchToken: the name is not one of the tokens.
var ErrNoSuchToken = errors.New("no such token: `cabinet token list` shows them")

// ErrTooManyTokens: the list is full.
var ErrTooManyTokens = errors.New("there are already 64 named tokens (MaxTokens): revoke one first (cabinet token list, cabinet token revoke NAME)")

// readTokensFile reads the named tokens' file (missing: empty).
func readTokensFile(path string) (tokensFile, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return tokensFile{Version: tokensFileVersion}, nil
	}
	if err != nil {
		return tokensFile{}, fmt.Errorf("read the token list: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTokensFileBytes+1))
	if err != nil {
		return tokensFile{}, fmt.Errorf("read the token list: %w", err)
	}
	if len(b) > maxTokensFileBytes {
		return tokensFile{}, fmt.Errorf("read the token list: %s is larger than %d KiB; remove it and make the tokens again", path, maxTokensFileBytes>>10)
	}
	return parseTokens(b)
}

// update changes the named tokens' file under the lock.
func (s *Store) update(fn func(*tokensFile) error) error {
	unlock, err := LockFile(s.Path+".lock", 5*time.Second)
	if err != nil {
		return err
	}
	defer unlock()
	f, err := readTokensFile(s.Path)
	if err != nil {
		return err
	}
	if err := fn(&f); err != nil {
		return err
	}
	if f.Tokens == nil {
		f.Tokens = []TokenInfo{}
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(s.Path, append(b, '\n')); err != nil {
		return fmt.Errorf("write the token list: %w", err)
	}
	return nil
}

// LockFile takes an exclusive flock on path, waiting at most wait.
func LockFile(path string, wait time.Duration) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Create makes a token and returns it: the only time it is shown. The
// name DefaultName replaces the default token (its scopes are fixed:
// scopes must be nil or DefaultTokenScopes); another name gets scopes, or
// NewTokenScopes when nil, and replaces a token of that name (replaced).
func (s *Store) Create(name string, scopes []string) (tok string, replaced bool, err error) {
	if err := ValidName(name); err != nil {
		return "", false, err
	}
	if name == DefaultName {
		if scopes != nil && !slices.Equal(normalScopes(scopes), DefaultTokenScopes) {
			return "", false, fmt.Errorf("the default token's scopes are %s; make a named token for others (cabinet token new --name NAME --scope …)",
				strings.Join(DefaultTokenScopes, ","))
		}
		_, err := ReadToken(s.DefaultPath)
		replaced = err == nil
		tok, err = NewToken(s.DefaultPath)
		return tok, replaced, err
	}
	if scopes == nil {
		scopes = NewTokenScopes
	}
	scopes = normalScopes(scopes)
	if len(scopes) == 0 {
		return "", false, fmt.Errorf("no scope given: name at least one of %s", strings.Join(Scopes, ", "))
	}
	if tok, err = randomToken(); err != nil {
		return "", false, fmt.Errorf("new token: %w", err)
	}
	err = s.update(func(f *tokensFile) error {
		t := TokenInfo{Name: name, SHA256: sum(tok), Scopes: scopes, Created: s.now().Truncate(time.Second)}
		if i := slices.IndexFunc(f.Tokens, func(t TokenInfo) bool { return t.Name == name }); i >= 0 {
			f.Tokens[i], replaced = t, true
			return nil
		}
		if len(f.Tokens) >= MaxTokens {
			return ErrTooManyTokens
		}
		f.Tokens = append(f.Tokens, t)
		return nil
	})
	if err != nil {
		return "", false, err
	}
	return tok, replaced, nil
}

// List returns the tokens: the default one first (when it exists), then
// the named ones in the order they were made. A token never used has a
// zero LastUsed.
func (s *Store) List() ([]TokenInfo, error) {
	f, err := readTokensFile(s.Path)
	if err != nil {
		return nil, err
	}
	var out []TokenInfo
	tok, err := ReadToken(s.DefaultPath)
	switch {
	case err == nil:
		d := TokenInfo{Name: DefaultName, SHA256: sum(tok), Scopes: slices.Clone(DefaultTokenScopes)}
		if fi, err := os.Stat(s.DefaultPath); err == nil {
			d.Created = fi.ModTime().Truncate(time.Second)
		}
		if u := f.Default; u != nil && u.SHA256 == d.SHA256 {
			d.LastUsed, d.LastAddr = u.LastUsed, u.LastAddr
		}
		out = append(out, d)
	case !errors.Is(err, ErrNoToken):
		return nil, err
	}
	return append(out, f.Tokens...), nil
}

// Revoke removes a token; it stops working at the next request. Revoking
// DefaultName removes the default token's file (`cabinet token new` makes
// another; so does the daemon when it next starts).
func (s *Store) Revoke(name string) error {
	if name == DefaultName {
		err := os.Remove(s.DefaultPath)
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w (there is no default token)", ErrNoSuchToken)
		}
		if err != nil {
			return fmt.Errorf("revoke the default token: %w", err)
		}
		return nil
	}
	return s.update(func(f *tokensFile) error {
		i := slices.IndexFunc(f.Tokens, func(t TokenInfo) bool { return t.Name == name })
		if i < 0 {
			return fmt.Errorf("%w (no token is named %q)", ErrNoSuchToken, name)
		}
		f.Tokens = slices.Delete(f.Tokens, i, i+1)
		return nil
	})
}

// RevokeAll removes every token, the default one too, and says how many
// there were.
func (s *Store) RevokeAll() (int, error) {
	n := 0
	err := s.update(func(f *tokensFile) error {
		n = len(f.Tokens)
		f.Tokens, f.Default = nil, nil
		return nil
	})
	if err != nil {
		return 0, err
	}
	switch err := os.Remove(s.DefaultPath); {
	case err == nil:
		n++
	case !errors.Is(err, os.ErrNotExist):
		return n, fmt.Errorf("revoke the default token: %w", err)
	}
	return n, nil
}

// recordUse notes that the token name (with hash hexSum) was used at at
// from addr. A token revoked or replaced meanwhile is left alone.
func (s *Store) recordUse(name, hexSum string, at time.Time, addr string) error {
	return s.update(func(f *tokensFile) error {
		at, addr := at.Truncate(time.Second), clip(addr, maxAddrLen)
		if name == DefaultName {
			f.Default = &defaultUse{SHA256: hexSum, LastUsed: at, LastAddr: addr}
			return nil
		}
		for i := range f.Tokens {
			if t := &f.Tokens[i]; t.Name == name && t.SHA256 == hexSum {
				t.LastUsed, t.LastAddr = at, addr
			}
		}
		return nil
	})
}
