// Package logfile owns Cabinet's log: <state_dir>/cabinet.log, appended to
// by several processes at once (the daemon and every hook), bounded in size
// and rotated only under a lock so /userdata never fills; and the zerolog
// logger built on it, which scrubs secrets from every line.
package logfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/rs/zerolog"
)

// Defaults: 1 MiB per file and two older files, 3 MiB in all.
const (
	DefaultMaxBytes = 1 << 20
	DefaultKeep     = 2
)

// File is an append-only log file shared between processes. Each Write is
// one O_APPEND write (zerolog writes a whole line at a time), so lines from
// different processes never interleave within a line.
type File struct {
	path     string
	maxBytes int64
	keep     int

	mu sync.Mutex
	f  *os.File
}

// Open opens (creating) the log file. maxBytes ≤ 0 and keep < 0 take the
// defaults.
func Open(path string, maxBytes int64, keep int) (*File, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if keep < 0 {
		keep = DefaultKeep
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	lf := &File{path: path, maxBytes: maxBytes, keep: keep}
	if err := lf.reopen(); err != nil {
		return nil, err
	}
	return lf, nil
}

func (l *File) reopen() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	if l.f != nil {
		l.f.Close()
	}
	l.f = f
	return nil
}

// Write appends p and rotates when the file has grown past its bound.
func (l *File) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, os.ErrClosed
	}
	n, err := l.f.Write(p)
	if err != nil {
		return n, err
	}
	if fi, serr := l.f.Stat(); serr == nil && fi.Size() > l.maxBytes {
		l.rotate(fi)
	}
	return n, nil
}

// rotate renames cabinet.log → .1 → .2 … under an exclusive, non-blocking
// lock. If another process holds the lock, it is rotating: we only reopen.
func (l *File) rotate(ours os.FileInfo) {
	lock, err := os.OpenFile(l.path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return // somebody else is rotating; the next write reopens
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	cur, err := os.Stat(l.path)
	if err == nil && os.SameFile(cur, ours) && cur.Size() > l.maxBytes {
		if l.keep == 0 {
			os.Truncate(l.path, 0)
			return
		}
		for i := l.keep; i >= 1; i-- {
			from := l.path
			if i > 1 {
				from = l.path + "." + strconv.Itoa(i-1)
			}
			os.Rename(from, l.path+"."+strconv.Itoa(i))
		}
	}
	l.reopen()
}

// Close closes the file.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// Redactor replaces secret values, in their raw and JSON-escaped spellings,
// before a line reaches its writer. It is the last line of defence: config
// Secrets already print masked.
type Redactor struct {
	w    io.Writer
	mu   sync.RWMutex
	olds [][]byte
}

// NewRedactor wraps w.
func NewRedactor(w io.Writer, secrets []string) *Redactor {
	r := &Redactor{w: w}
	r.SetSecrets(secrets)
	return r
}

// SetSecrets replaces the secrets to scrub (the daemon calls it when the
// configuration is reloaded). Values shorter than 4 bytes are ignored: they
// would redact ordinary words and are no real secret.
func (r *Redactor) SetSecrets(secrets []string) {
	var olds [][]byte
	for _, s := range secrets {
		if len(s) < 4 {
			continue
		}
		olds = append(olds, []byte(s))
		if q, err := json.Marshal(s); err == nil && !bytes.Equal(q[1:len(q)-1], []byte(s)) {
			olds = append(olds, q[1:len(q)-1])
		}
	}
	r.mu.Lock()
	r.olds = olds
	r.mu.Unlock()
}

func (r *Redactor) Write(p []byte) (int, error) {
	r.mu.RLock()
	out := p
	for _, old := range r.olds {
		if bytes.Contains(out, old) {
			out = bytes.ReplaceAll(out, old, []byte("********"))
		}
	}
	r.mu.RUnlock()
	if _, err := r.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// New builds the logger writing JSON lines to w at level (trace … disabled;
// unknown means info).
func New(w io.Writer, level string) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		lvl = zerolog.InfoLevel
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Int("pid", os.Getpid()).Logger()
}

// Lazy is a File opened at its first write: a hook that has nothing to log
// (the usual case at the default level) never touches the file. Its writes
// never fail: a hook's stderr is ES's, and zerolog reports a failed write
// there, so a log that cannot be opened or written (a full /userdata) loses
// the line instead.
type Lazy struct {
	path     string
	maxBytes int64
	keep     int
	once     sync.Once
	f        *File
	err      error
}

// OpenLazy returns a Lazy file.
func OpenLazy(path string, maxBytes int64, keep int) *Lazy {
	return &Lazy{path: path, maxBytes: maxBytes, keep: keep}
}

func (l *Lazy) Write(p []byte) (int, error) {
	l.once.Do(func() { l.f, l.err = Open(l.path, l.maxBytes, l.keep) })
	if l.err == nil {
		l.f.Write(p) //nolint:errcheck // see Lazy
	}
	return len(p), nil
}

// Close closes the file if it was opened.
func (l *Lazy) Close() error {
	l.once.Do(func() { l.err = os.ErrClosed })
	if l.f != nil {
		return l.f.Close()
	}
	return nil
}
