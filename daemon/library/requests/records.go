package requests

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/batocera-cabinet/cabinet/hook/store"
)

// records are the library requests (library_request): games the household asked ROMarr for,
// which the daemon follows until they are in RomM (and, when asked, on the cabinet). Keyed by
// the request's id, which begins with its creation time.
var records = store.Records[Request]{Name: "requests"}

// Request states. The open ones are followed; installed and expired end a
// request, and so do in_romm without an install and failed once the
// follower closes it (a request is open while it has a next check, see
// Open).
const (
	StatePending     = "pending"     // recorded; ROMarr's answer did not say where it stands yet
	StateSearching   = "searching"   // on ROMarr's wanted list: no usable release yet
	StateDownloading = "downloading" // ROMarr handed a release to its download client
	StateImporting   = "importing"   // ROMarr filed the download in its library; RomM does not list it yet
	StateInRomM      = "in_romm"     // RomM lists the game (ROMID)
	StateInstalled   = "installed"   // installed on the cabinet
	StateFailed      = "failed"      // stuck or given up; Detail says why
	StateExpired     = "expired"     // no longer followed: too old, or checked too often
)

// States lists the states in their usual order (for schemas).
func States() []string {
	return []string{StatePending, StateSearching, StateDownloading, StateImporting, StateInRomM,
		StateInstalled, StateFailed, StateExpired}
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
	case StateInstalled, StateExpired:
		return false
	case StateInRomM:
		if !r.Install {
			return false
		}
	}
	return !r.NextCheck.IsZero()
}

// Bounds on the requests kept.
const (
	// MaxOpen is how many requests may be followed at once.
	MaxOpen = 200
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
	ErrTooMany   = fmt.Errorf("Cabinet follows %d library requests already: wait until some arrive or expire (library_requests lists them)", MaxOpen)
	ErrNoRequest = errors.New("no such library request")
)

// NewID returns a new request id: the time, UTC to the millisecond
// (so ids sort by creation), and four random bytes.
func NewID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on Linux
	return now.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(b[:])
}

// Kept is the requests in the store: the follower's and the tools' Store on a cabinet.
type Kept struct{ DB *store.Store }

// PutRequest records a new request or replaces one. A new open request is refused with
// ErrTooMany when MaxOpen are open; the oldest closed requests beyond the ones kept are
// forgotten.
func (k Kept) PutRequest(r Request) error {
	if err := checkRequest(&r); err != nil {
		return err
	}
	return records.Update(k.DB, func(b store.Bucket[Request]) error {
		if r.Open() {
			old, found, _ := b.Get(r.ID)
			if !found || !old.Open() {
				open, _, err := countRequests(b)
				if err != nil {
					return err
				}
				if open >= MaxOpen {
					return ErrTooMany
				}
			}
		}
		return putRequest(b, r)
	})
}

// UpdateRequest changes the request id in one transaction: fn gets the stored record and
// changes it; an error from fn leaves it as it was.
func (k Kept) UpdateRequest(id string, fn func(*Request) error) error {
	return records.Update(k.DB, func(b store.Bucket[Request]) error {
		r, found, err := b.Get(id)
		switch {
		case err != nil:
			return fmt.Errorf("read library request: %w", err)
		case !found:
			return ErrNoRequest
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

// Requests lists every request, newest first. A record that does not decode is skipped.
func (k Kept) Requests() ([]Request, error) {
	var out []Request
	err := records.View(k.DB, func(b store.Bucket[Request]) error {
		return eachRequest(b, func(r Request) { out = append(out, r) })
	})
	sortRequestsNewest(out)
	return out, err
}

// DueRequests lists the open requests whose next check is at or before now, the longest due
// first.
func (k Kept) DueRequests(now time.Time) ([]Request, error) {
	var out []Request
	err := records.View(k.DB, func(b store.Bucket[Request]) error {
		return eachRequest(b, func(r Request) {
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
func (k Kept) OpenRequests() (int, error) {
	n := 0
	err := records.View(k.DB, func(b store.Bucket[Request]) error {
		var err error
		n, _, err = countRequests(b)
		return err
	})
	return n, err
}

// checkRequest refuses a record without id, game or a known state, and caps its text (the
// caller cleaned it).
func checkRequest(r *Request) error {
	if r.ID == "" || len(r.ID) > maxRequestID {
		return fmt.Errorf("record a library request: bad id %q", capRequestText(r.ID, 80))
	}
	if r.Game == "" {
		return errors.New("record a library request: it names no game")
	}
	if !slices.Contains(States(), r.State) {
		return fmt.Errorf("record a library request: unknown state %q", capRequestText(r.State, 80))
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

// putRequest writes r and forgets the oldest closed requests beyond maxClosedRequests.
func putRequest(b store.Bucket[Request], r Request) error {
	if err := b.Put(r.ID, r); err != nil {
		return err
	}
	_, closed, err := countRequests(b)
	if err != nil || len(closed) <= maxClosedRequests {
		return err
	}
	sortRequestsNewest(closed)
	for _, old := range closed[maxClosedRequests:] {
		if err := b.Delete(old.ID); err != nil {
			return err
		}
	}
	return nil
}

// countRequests counts the open requests of b and returns the closed ones.
func countRequests(b store.Bucket[Request]) (open int, closed []Request, err error) {
	err = eachRequest(b, func(r Request) {
		if r.Open() {
			open++
		} else {
			closed = append(closed, r)
		}
	})
	return open, closed, err
}

// eachRequest calls fn with every request filed under its own id.
func eachRequest(b store.Bucket[Request], fn func(Request)) error {
	return b.Each(func(key string, r Request) error {
		if r.ID == key {
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
