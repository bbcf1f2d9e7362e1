package store

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
)

// Library requests (library_request): games the household asked ROMarr for,
// which the daemon follows until they are in RomM (and, when asked, on the
// cabinet). Keyed by the request's id, which begins with its creation time.
// An older Cabinet ignores the bucket.
var bRequests = []byte("requests")

// Request states. The open ones are followed; installed and expired end a
// request, and so do in_romm without an install and failed once the
// follower closes it (a request is open while it has a next check, see
// Open).
const (
	RequestPending     = "pending"     // recorded; ROMarr's answer did not say where it stands yet
	RequestSearching   = "searching"   // on ROMarr's wanted list: no usable release yet
	RequestDownloading = "downloading" // ROMarr handed a release to its download client
	RequestImporting   = "importing"   // ROMarr filed the download in its library; RomM does not list it yet
	RequestInRomM      = "in_romm"     // RomM lists the game (ROMID)
	RequestInstalled   = "installed"   // installed on the cabinet
	RequestFailed      = "failed"      // stuck or given up; Detail says why
	RequestExpired     = "expired"     // no longer followed: too old, or checked too often
)

// RequestStates lists the states in their usual order (for schemas).
func RequestStates() []string {
	return []string{RequestPending, RequestSearching, RequestDownloading, RequestImporting, RequestInRomM,
		RequestInstalled, RequestFailed, RequestExpired}
}

// Request is one library request.
type Request struct {
	ID   string `json:"id"`
	Game string `json:"game"`
	// Platform is ROMarr's platform slug as it was sent ("snes",
	// "genesis-slash-megadrive").
	Platform string `json:"platform"`
	Install  bool   `json:"install,omitempty"`
	// System is the Batocera system folder the request named, "" when it
	// named a ROMarr platform only (an install then picks the system from
	// RomM's platform).
	System string `json:"system,omitempty"`
	State  string `json:"state"`
	Detail string `json:"detail,omitempty"`
	// Release is the release ROMarr picked, when it said.
	Release string `json:"release,omitempty"`
	ROMID   int    `json:"rom_id,omitempty"`
	// CreatedAt is when the request was made; UpdatedAt when its state last
	// changed (the follower's backoff counts from it).
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// NextCheck is when the follower looks again; zero once the request is
	// closed.
	NextCheck time.Time `json:"next_check,omitzero"`
	Checks    int       `json:"checks,omitempty"`
	// InstallTries counts failed installs.
	InstallTries int `json:"install_tries,omitempty"`
}

// Open reports whether the request is still followed.
func (r Request) Open() bool {
	switch r.State {
	case RequestInstalled, RequestExpired:
		return false
	case RequestInRomM:
		if !r.Install {
			return false
		}
	}
	return !r.NextCheck.IsZero()
}

// Bounds on the requests kept.
const (
	// MaxOpenRequests is how many requests may be followed at once.
	MaxOpenRequests = 200
	// maxClosedRequests closed requests are kept for library_requests; the
	// oldest go first.
	maxClosedRequests = 200
	maxRequestID      = 64
	maxRequestGame    = 200
	maxRequestField   = 100
	maxRequestDetail  = 300
)

// Errors of the request records.
var (
	ErrTooManyRequests = fmt.Errorf("Cabinet follows %d library requests already: wait until some arrive or expire (library_requests lists them)", MaxOpenRequests)
	ErrNoRequest       = errors.New("no such library request")
)

// NewRequestID returns a new request id: the time, UTC to the millisecond
// (so ids sort by creation), and four random bytes.
func NewRequestID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on Linux
	return now.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(b[:])
}

// PutRequest records a new request or replaces one. A new open request is
// refused with ErrTooManyRequests when MaxOpenRequests are open; the
// oldest closed requests beyond the ones kept are forgotten.
func (s *Store) PutRequest(r Request) error {
	if err := checkRequest(&r); err != nil {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bRequests)
		if err != nil {
			return err
		}
		if r.Open() {
			var old Request
			wasOpen := false
			if v := b.Get([]byte(r.ID)); v != nil && json.Unmarshal(v, &old) == nil {
				wasOpen = old.Open()
			}
			if !wasOpen {
				open, _, err := countRequests(b)
				if err != nil {
					return err
				}
				if open >= MaxOpenRequests {
					return ErrTooManyRequests
				}
			}
		}
		return putRequest(b, r)
	})
}

// UpdateRequest changes the request id in one transaction: fn gets the
// stored record and changes it; an error from fn leaves it as it was.
func (s *Store) UpdateRequest(id string, fn func(*Request) error) error {
	return s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bRequests)
		if b == nil {
			return ErrNoRequest
		}
		v := b.Get([]byte(id))
		if v == nil {
			return ErrNoRequest
		}
		var r Request
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("read library request %s: %w", clip(id), err)
		}
		if err := fn(&r); err != nil {
			return err
		}
		r.ID = id
		if err := checkRequest(&r); err != nil {
			return err
		}
		return putRequest(b, r)
	})
}

// Requests lists every request, newest first. A record that does not
// decode is skipped.
func (s *Store) Requests() ([]Request, error) {
	var out []Request
	err := s.view(func(tx *bolt.Tx) error {
		return eachRequest(tx.Bucket(bRequests), func(r Request) { out = append(out, r) })
	})
	sortRequestsNewest(out)
	return out, err
}

// DueRequests lists the open requests whose next check is at or before now,
// the longest due first.
func (s *Store) DueRequests(now time.Time) ([]Request, error) {
	var out []Request
	err := s.view(func(tx *bolt.Tx) error {
		return eachRequest(tx.Bucket(bRequests), func(r Request) {
			if r.Open() && !r.NextCheck.After(now) {
				out = append(out, r)
			}
		})
	})
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].NextCheck.Equal(out[j].NextCheck) {
			return out[i].NextCheck.Before(out[j].NextCheck)
		}
		return out[i].ID < out[j].ID
	})
	return out, err
}

// OpenRequests counts the requests still followed (doctor).
func (s *Store) OpenRequests() (int, error) {
	n := 0
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bRequests)
		if b == nil {
			return nil
		}
		var err error
		n, _, err = countRequests(b)
		return err
	})
	return n, err
}

// checkRequest refuses a record without id, game or a known state, and caps
// its text (the caller cleaned it).
func checkRequest(r *Request) error {
	if r.ID == "" || len(r.ID) > maxRequestID {
		return fmt.Errorf("record a library request: bad id %q", clip(r.ID))
	}
	if r.Game == "" {
		return errors.New("record a library request: it names no game")
	}
	known := false
	for _, st := range RequestStates() {
		known = known || st == r.State
	}
	if !known {
		return fmt.Errorf("record a library request: unknown state %q", clip(r.State))
	}
	r.Game = capRequestText(r.Game, maxRequestGame)
	r.Platform = capRequestText(r.Platform, maxRequestField)
	r.System = capRequestText(r.System, maxRequestField)
	r.Release = capRequestText(r.Release, maxRequestGame)
	r.Detail = capRequestText(r.Detail, maxRequestDetail)
	return nil
}

func capRequestText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// putRequest writes r and forgets the oldest closed requests beyond
// maxClosedRequests.
func putRequest(b *bolt.Bucket, r Request) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := b.Put([]byte(r.ID), v); err != nil {
		return err
	}
	_, closed, err := countRequests(b)
	if err != nil || len(closed) <= maxClosedRequests {
		return err
	}
	sortRequestsNewest(closed)
	for _, old := range closed[maxClosedRequests:] {
		if err := b.Delete([]byte(old.ID)); err != nil {
			return err
		}
	}
	return nil
}

// countRequests counts the open requests of b and returns the closed ones.
func countRequests(b *bolt.Bucket) (open int, closed []Request, err error) {
	err = eachRequest(b, func(r Request) {
		if r.Open() {
			open++
		} else {
			closed = append(closed, r)
		}
	})
	return open, closed, err
}

func eachRequest(b *bolt.Bucket, fn func(Request)) error {
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		var r Request
		if json.Unmarshal(v, &r) == nil && r.ID == string(k) {
			fn(r)
		}
		return nil
	})
}

func sortRequestsNewest(list []Request) {
	sort.SliceStable(list, func(i, j int) bool {
		if !list[i].CreatedAt.Equal(list[j].CreatedAt) {
			return list[i].CreatedAt.After(list[j].CreatedAt)
		}
		return list[i].ID > list[j].ID
	})
}
