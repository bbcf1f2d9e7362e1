package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
)

// The file's bounds: a flood of registrations or grants cannot grow it.
const (
	MaxClients        = 64
	maxGrants         = 128
	maxGrantsOfClient = 8
	maxLiveAccess     = 4  // access tokens of one grant still valid
	maxUsedRefresh    = 32 // rotated refresh tokens remembered, to catch a reuse
	maxStateBytes     = 1 << 20
	stateVersion      = 1
)

// Kinds of client.
const (
	KindRegistered = "registered" // by dynamic client registration
	KindMetadata   = "metadata"   // a Client ID Metadata Document (its URL is its id)
)

// Client is one client as `cabinet clients list` shows it. Its name is what
// it said (untrusted, cleaned) and is shown as unverified.
type Client struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	Kind         string    `json:"kind"`
	RedirectURIs []string  `json:"redirect_uris"`
	Created      time.Time `json:"created"`
	// LastUsed is the last code or refresh exchange, or request made
	// with one of its tokens; zero until a code is exchanged.
	LastUsed time.Time `json:"last_used,omitzero"`
}

// Grant is one signed-in session of a client: its scopes, its refresh
// family and the access tokens issued in it.
type Grant struct {
	ID           string    `json:"id"`
	ClientID     string    `json:"client_id"`
	Scopes       []string  `json:"scopes"`
	RedirectHost string    `json:"redirect_host"`
	Created      time.Time `json:"created"`
	Expires      time.Time `json:"expires"` // Created + SessionLife, never extended
	LastRequest  time.Time `json:"last_request,omitzero"`
	LastExchange time.Time `json:"last_exchange"`
	Access       []hashed  `json:"access"`
	Refresh      string    `json:"refresh"` // hash of the one refresh token that is valid
	UsedRefresh  []string  `json:"used_refresh,omitempty"`
}

// hashed is an access token's SHA-256 (hex) and expiry.
type hashed struct {
	Hash    string    `json:"sha256"`
	Expires time.Time `json:"expires"`
	// Scopes, when set, are fewer than the grant's (a refresh asked so).
	Scopes []string `json:"scopes,omitempty"`
}

// Limits are the sign-in counters of the day and the lock.
type Limits struct {
	Day       string `json:"day"` // YYYY-MM-DD, the cabinet's local day
	Requests  int    `json:"requests"`
	WrongPINs int    `json:"wrong_pins"`
	// Locked after WrongPINsPerDay wrong PINs in a day: sign-in stays
	// refused until `cabinet clients unlock`.
	Locked bool `json:"locked,omitempty"`
}

func (l *Limits) roll(day string) {
	if l.Day != day {
		l.Day, l.Requests, l.WrongPINs = day, 0, 0
	}
}

type stateFile struct {
	Version int      `json:"version"`
	Clients []Client `json:"clients"`
	Grants  []Grant  `json:"grants"`
	Limits  Limits   `json:"limits"`
}

func (f *stateFile) client(id string) *Client {
	for i := range f.Clients {
		if f.Clients[i].ID == id {
			return &f.Clients[i]
		}
	}
	return nil
}

func (f *stateFile) grant(id string) *Grant {
	for i := range f.Grants {
		if f.Grants[i].ID == id {
			return &f.Grants[i]
		}
	}
	return nil
}

// dropGrant removes a grant: its refresh and access tokens die with it.
func (f *stateFile) dropGrant(id string) bool {
	n := len(f.Grants)
	f.Grants = slices.DeleteFunc(f.Grants, func(g Grant) bool { return g.ID == id })
	return len(f.Grants) != n
}

// dropClient removes a client and its grants.
func (f *stateFile) dropClient(id string) bool {
	n := len(f.Clients)
	f.Clients = slices.DeleteFunc(f.Clients, func(c Client) bool { return c.ID == id })
	f.Grants = slices.DeleteFunc(f.Grants, func(g Grant) bool { return g.ClientID == id })
	return len(f.Clients) != n
}

// prune drops what has expired: grants past their session, access tokens
// past their hour, registrations no exchange followed within an hour, and
// clients unused for 90 days.
func (f *stateFile) prune(now time.Time) {
	f.Grants = slices.DeleteFunc(f.Grants, func(g Grant) bool { return !now.Before(g.Expires) })
	for i := range f.Grants {
		f.Grants[i].Access = slices.DeleteFunc(f.Grants[i].Access, func(a hashed) bool { return !now.Before(a.Expires) })
	}
	var gone []string
	for _, c := range f.Clients {
		last := c.LastUsed
		if last.IsZero() {
			if now.Sub(c.Created) >= UnusedClientTTL {
				gone = append(gone, c.ID)
			}
			continue
		}
		if now.Sub(last) >= IdleClientTTL {
			gone = append(gone, c.ID)
		}
	}
	for _, id := range gone {
		f.dropClient(id)
	}
}

// hashOf is a token's SHA-256, hex.
func hashOf(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// store is oauth.json: changed under a lock (read, change, atomic replace),
// read through a cache that is refreshed when the file changes.
type store struct {
	path    string
	now     func() time.Time
	changed func() // nil: nobody listens

	mu    sync.Mutex
	cache *httpauth.Cached[*index]
}

// index is the file as the bearer check reads it.
type index struct {
	file   stateFile
	access map[string]int // access hash → grant index
}

func newStore(path string, now func() time.Time, changed func()) *store {
	return &store{path: path, now: now, changed: changed, cache: httpauth.NewCached[*index](path)}
}

func readState(path string) (stateFile, error) {
	b, err := bounded.ReadFile(path, maxStateBytes)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return stateFile{Version: stateVersion}, nil
	case errors.Is(err, bounded.ErrTooLarge):
		return stateFile{}, errors.New("the OAuth clients' file is larger than 1 MiB: remove oauth.json in the state dir and sign the clients in again")
	case err != nil:
		return stateFile{}, fmt.Errorf("read the OAuth clients: %w", err)
	}
	return parseState(b)
}

// parseState reads the file's bytes; a file too large, of another version
// or not JSON is an error (fail closed: no OAuth token passes).
func parseState(b []byte) (stateFile, error) {
	if len(b) > maxStateBytes {
		return stateFile{}, errors.New("the OAuth clients' file is larger than 1 MiB: remove oauth.json in the state dir and sign the clients in again")
	}
	var f stateFile
	if err := json.Unmarshal(b, &f); err != nil {
		return stateFile{}, fmt.Errorf("the OAuth clients' file is damaged (%v): remove oauth.json in the state dir and sign the clients in again", err)
	}
	if f.Version != stateVersion {
		return stateFile{}, fmt.Errorf("the OAuth clients' file has version %d, this Cabinet reads %d: update Cabinet, or remove oauth.json", f.Version, stateVersion)
	}
	return f, nil
}

func loadIndex(path string) (*index, error) {
	f, err := readState(path)
	if err != nil {
		return nil, err
	}
	ix := &index{file: f, access: map[string]int{}}
	for i, g := range f.Grants {
		for _, a := range g.Access {
			ix.access[a.Hash] = i
		}
	}
	return ix, nil
}

// read is the file as last read (nil when missing or unreadable).
func (s *store) read() *index {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cache.Get(loadIndex)
}

// update changes the file under its lock; fn sees it pruned.
func (s *store) update(fn func(*stateFile) error) error {
	unlock, err := httpauth.LockFile(s.path+".lock", 5*time.Second)
	if err != nil {
		return err
	}
	defer unlock()
	f, err := readState(s.path)
	if err != nil {
		return err
	}
	f.prune(s.now())
	if err := fn(&f); err != nil {
		return err
	}
	if f.Clients == nil {
		f.Clients = []Client{}
	}
	if f.Grants == nil {
		f.Grants = []Grant{}
	}
	f.Version = stateVersion
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := httpauth.WriteFileAtomic(s.path, append(b, '\n')); err != nil {
		return fmt.Errorf("write the OAuth clients: %w", err)
	}
	if s.changed != nil {
		s.changed()
	}
	return nil
}

// bound keeps the file within its limits, dropping the least recently
// used first: a client's oldest grants beyond maxGrantsOfClient, then the
// oldest grants beyond maxGrants.
func (f *stateFile) bound() {
	byClient := map[string]int{}
	for i := len(f.Grants) - 1; i >= 0; i-- { // newest last
		byClient[f.Grants[i].ClientID]++
		if byClient[f.Grants[i].ClientID] > maxGrantsOfClient {
			f.Grants = slices.Delete(f.Grants, i, i+1)
		}
	}
	if n := len(f.Grants) - maxGrants; n > 0 {
		f.Grants = slices.Delete(f.Grants, 0, n)
	}
}

// Clients is the file's clients and grants, pruned, for `cabinet clients`.
func Clients(path string, now time.Time) ([]Client, []Grant, Limits, error) {
	f, err := readState(path)
	if err != nil {
		return nil, nil, Limits{}, err
	}
	f.prune(now)
	return f.Clients, f.Grants, f.Limits, nil
}

// ErrNoSuchClient: the id is not one of the clients.
var ErrNoSuchClient = errors.New("no such client: `cabinet clients list` shows them")

// Revoke removes a client (all when id is "") and its grants; its tokens,
// access tokens included, are refused from the next request.
func Revoke(path, id string, now time.Time) (int, error) {
	s := newStore(path, func() time.Time { return now }, nil)
	n := 0
	err := s.update(func(f *stateFile) error {
		if id == "" {
			n = len(f.Clients)
			f.Clients, f.Grants = nil, nil
			return nil
		}
		if !f.dropClient(id) {
			return ErrNoSuchClient
		}
		n = 1
		return nil
	})
	return n, err
}

// Unlock lifts the lock that wrong PINs set, and clears the day's count.
func Unlock(path string, now time.Time) (bool, error) {
	s := newStore(path, func() time.Time { return now }, nil)
	was := false
	err := s.update(func(f *stateFile) error {
		was = f.Limits.Locked
		f.Limits.Locked, f.Limits.WrongPINs = false, 0
		return nil
	})
	return was, err
}

// ClientExpiry is when a client is dropped unless used again: an hour
// after a registration no sign-in followed, 90 days after its last use.
func ClientExpiry(c Client) time.Time {
	if c.LastUsed.IsZero() {
		return c.Created.Add(UnusedClientTTL)
	}
	return c.LastUsed.Add(IdleClientTTL)
}
