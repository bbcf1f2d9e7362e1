// Package store is Cabinet's one database on /userdata (bbolt): the tracker's
// state, the latest value of every retained topic with its delivery mark,
// the bounded queue of events still to deliver, the session history, the
// name cache, and a schema version. Every change is one fsynced
// transaction, so a power cut at any instant leaves a consistent store, and
// "persisted" always means committed. A feature keeps records of its own in
// a bucket it declares where it lives (Records: the installer's installs,
// the request follower's requests, the RomM reporter's marks); the store
// knows only their bytes.
//
// Only one process owns the store at a time (the daemon, or one hook when no
// daemon runs); Open waits a short, bounded time for that ownership because
// bbolt itself would wait forever.
package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the layout this code reads and writes.
const SchemaVersion = 1

// ErrLocked means another process owns the store and did not let go within
// the lock timeout: the caller spools its event instead.
var ErrLocked = errors.New("the store is busy (another cabinet process owns it)")

// ErrCorrupt means the store could not be read; Open moves such a file
// aside and starts a new one, so the caller only sees it from operations.
var ErrCorrupt = errors.New("the store is damaged")

var (
	bMeta      = []byte("meta")
	bTracker   = []byte("tracker")
	bRetained  = []byte("retained")
	bQueue     = []byte("queue")
	bSessions  = []byte("sessions")
	bKeys      = []byte("keys")
	bNames     = []byte("names")
	bSystems   = []byte("systems")
	allBuckets = [][]byte{bMeta, bTracker, bRetained, bQueue, bSessions, bKeys, bNames, bSystems}

	kSchema     = []byte("schema")
	kSeq        = []byte("seq")
	kDropped    = []byte("dropped")
	kExpired    = []byte("expired")
	kQueueBytes = []byte("queue_bytes")
	kQueueLen   = []byte("queue_len")
	kPrunedAt   = []byte("pruned_at")
	kState      = []byte("state")
	kPlayDay    = []byte("play_day")
)

// Options bound the store. Zero values take the defaults.
type Options struct {
	// LockTimeout is how long Open waits for ownership (default 60 ms: a
	// hook must return quickly, and a busy store sends it to the spool).
	LockTimeout time.Duration
	// MaxQueue and MaxQueueBytes bound the undelivered events; overflow
	// drops the oldest and counts it (default 5000 and 4 MiB).
	MaxQueue      int
	MaxQueueBytes int
	// EventWindow is how long a time-sensitive event may wait for delivery
	// before it is dropped (default 60 s): a late "session_start" or
	// "cabinet started" would run automations at the wrong time.
	EventWindow time.Duration
	// KeyRetention is how long delivered event keys are remembered to refuse
	// duplicates (default 30 days).
	KeyRetention time.Duration
}

func (o *Options) defaults() {
	if o.LockTimeout <= 0 {
		o.LockTimeout = 60 * time.Millisecond
	}
	if o.MaxQueue <= 0 {
		o.MaxQueue = 5000
	}
	if o.MaxQueueBytes <= 0 {
		o.MaxQueueBytes = 4 << 20
	}
	if o.EventWindow <= 0 {
		o.EventWindow = 60 * time.Second
	}
	if o.KeyRetention <= 0 {
		o.KeyRetention = 30 * 24 * time.Hour
	}
}

// Store is an open store.
type Store struct {
	db   *bolt.DB
	lock *os.File
	opts Options
	// Quarantined names the damaged file Open moved aside, if any, so the
	// caller can log it once.
	Quarantined string
}

// Open opens (creating) the store at path, waiting at most LockTimeout for
// ownership. A damaged file is moved aside to path.damaged-<time> and a new
// store is started: the session history in it is kept on disk for recovery,
// and tracking goes on.
func Open(path string, opts Options) (*Store, error) {
	opts.defaults()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	lock, err := acquire(path+".lock", opts.LockTimeout)
	if err != nil {
		return nil, err
	}
	s := &Store{lock: lock, opts: opts}
	if err := s.openChecked(path); err != nil {
		release(lock)
		return nil, err
	}
	return s, nil
}

// openChecked opens the file and checks its buckets; a file bbolt cannot
// open, or whose pages turn out damaged, is moved aside and a new store is
// started in its place.
func (s *Store) openChecked(path string) error {
	db, err := openDB(path)
	if err == nil {
		s.db = db
		if err = s.init(); err != nil {
			db.Close()
		}
	}
	if err == nil || !errors.Is(err, ErrCorrupt) {
		return err
	}
	aside := fmt.Sprintf("%s.damaged-%s", path, time.Now().UTC().Format("20060102T150405"))
	if rerr := os.Rename(path, aside); rerr != nil {
		return fmt.Errorf("open store: %v; moving it aside failed: %w", err, rerr)
	}
	s.Quarantined = aside
	if s.db, err = openDB(path); err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	if err := s.init(); err != nil {
		s.db.Close()
		return err
	}
	return nil
}

// Reset moves a store that turned out damaged while in use aside and starts
// a new one in its place (the history it held stays in the moved file).
func (s *Store) Reset() error {
	path := s.db.Path()
	s.db.Close()
	aside := fmt.Sprintf("%s.damaged-%s", path, time.Now().UTC().Format("20060102T150405"))
	if err := os.Rename(path, aside); err != nil {
		return fmt.Errorf("move the damaged store aside: %w", err)
	}
	s.Quarantined = aside
	db, err := openDB(path)
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	s.db = db
	return s.init()
}

// openDB opens bbolt without waiting: our own lock file already serialises
// owners, so bbolt's flock is uncontended. bbolt panics on some damaged
// files; that is turned into an error.
func openDB(path string) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: 20 * time.Millisecond})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, ErrLocked
	}
	if err != nil {
		if damaged(err) {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		// A full disk, a read-only or unreadable file, a failing card: the
		// file may be fine, so it must not be moved aside and replaced.
		return nil, fmt.Errorf("open store %s: %w (check free space and permissions of its folder)", path, err)
	}
	return db, nil
}

// damaged tells the errors of a file bbolt read and rejected (bad magic,
// version or checksum, cut short) from the system's refusals.
func damaged(err error) bool {
	for _, e := range []error{bolterrors.ErrInvalid, bolterrors.ErrVersionMismatch, bolterrors.ErrChecksum, bolterrors.ErrInvalidMapping} {
		if errors.Is(err, e) {
			return true
		}
	}
	// bbolt reports a file shorter than its two meta pages without a
	// sentinel.
	return strings.Contains(err.Error(), "file size too small")
}

func (s *Store) init() error {
	return s.update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bMeta)
		switch v := getUint(meta, kSchema); {
		case v == 0:
			return putUint(meta, kSchema, SchemaVersion)
		case v > SchemaVersion:
			return fmt.Errorf("open store: it was written by a newer Cabinet (schema %d, this one reads %d): upgrade cabinet", v, SchemaVersion)
		}
		return nil
	})
}

// Close releases the store.
func (s *Store) Close() error {
	err := s.db.Close()
	release(s.lock)
	return err
}

// update runs fn in one fsynced write transaction, turning a bbolt panic on
// damaged pages into ErrCorrupt.
func (s *Store) update(fn func(*bolt.Tx) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	return s.db.Update(fn)
}

func (s *Store) view(fn func(*bolt.Tx) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	return s.db.View(fn)
}

// acquire takes an exclusive flock on the lock file, retrying every
// millisecond until timeout (bbolt's own retry step is 50 ms, too coarse for
// a hook).
func acquire(path string, timeout time.Duration) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open store lock: %w", err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock store: %w", err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, ErrLocked
		}
		time.Sleep(time.Millisecond)
	}
}

func release(f *os.File) {
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// ReadSchema reports the schema version of the store file at path without
// changing it (0 when there is no store yet): the installer compares it with
// SchemaVersion before it swaps binaries. The store must not be in use: it
// waits at most a second for bbolt's lock.
func ReadSchema(path string) (v uint64, err error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return 0, fmt.Errorf("read the store's schema: %w (stop cabinet serve first)", ErrLocked)
	}
	if err != nil {
		return 0, fmt.Errorf("read the store's schema: %w", err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		if meta := tx.Bucket(bMeta); meta != nil {
			v = getUint(meta, kSchema)
		}
		return nil
	})
	return v, err
}
