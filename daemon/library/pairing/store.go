package pairing

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
)

// File names inside Store.Dir.
const (
	tokenFile  = "token"
	deviceFile = "device.json"
	maxFile    = 64 << 10
	maxToken   = 1024
)

// ErrNotPaired means no paired token is stored.
var ErrNotPaired = errors.New("the cabinet is not paired with RomM: run `cabinet romm pair`")

// ErrOtherServer means the stored token was paired with another RomM than the one configured.
var ErrOtherServer = errors.New("the paired RomM token belongs to another RomM address: run `cabinet romm pair` again for the one in cabinet.romm.url")

// Paired is a stored pairing. Its String and GoString leave the token out, so printing one by
// mistake shows no secret.
type Paired struct {
	Token     string
	DeviceID  string
	URL       string // cabinet.romm.url the token was paired with
	Scopes    []string
	PairedAt  time.Time
	ExpiresAt time.Time // zero: RomM set no expiry
	// ReportSince, when before PairedAt, is where reporting starts
	// (`cabinet romm backfill`).
	ReportSince time.Time
}

func (p Paired) String() string {
	return fmt.Sprintf("paired with %s as device %q at %s", p.URL, p.DeviceID, p.PairedAt.Format(time.RFC3339))
}

// GoString keeps %#v free of the token too.
func (p Paired) GoString() string { return "pairing.Paired{" + p.String() + "}" }

// device is device.json: everything of a pairing but the token.
type device struct {
	DeviceID  string    `json:"device_id"`
	URL       string    `json:"url"`
	Scopes    []string  `json:"scopes"`
	PairedAt  time.Time `json:"paired_at"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// ReportSince is `cabinet romm backfill --since`: sessions from then on
	// are reported, not only those after PairedAt.
	ReportSince time.Time `json:"report_since,omitzero"`
}

// Store keeps the paired token in Dir (<state_dir>/romm): token (mode 0600; on exFAT, where
// /userdata may live, modes mean nothing) and device.json beside it. Writes are atomic (temporary
// file, fsync, rename), the token last, so a reader that sees a new token sees its device too.
type Store struct{ Dir string }

// TokenPath is the token file, the one a watcher should look at.
func (s Store) TokenPath() string { return filepath.Join(s.Dir, tokenFile) }

// DevicePath is device.json.
func (s Store) DevicePath() string { return filepath.Join(s.Dir, deviceFile) }

// Load reads the pairing; ErrNotPaired when there is no token.
func (s Store) Load() (Paired, error) {
	b, err := bounded.ReadFile(s.TokenPath(), maxFile)
	if errors.Is(err, os.ErrNotExist) {
		return Paired{}, ErrNotPaired
	}
	if err != nil {
		return Paired{}, fmt.Errorf("read the paired RomM token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if err := checkToken(tok); err != nil {
		return Paired{}, fmt.Errorf("the paired RomM token in %s %v: run `cabinet romm pair` again", s.TokenPath(), err)
	}
	p := Paired{Token: tok}
	b, err = bounded.ReadFile(s.DevicePath(), maxFile)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return p, nil // a token without its device: still usable for reads
	case err != nil:
		return Paired{}, fmt.Errorf("read the RomM pairing: %w", err)
	}
	var d device
	if err := json.Unmarshal(b, &d); err != nil {
		return Paired{}, fmt.Errorf("the RomM pairing in %s is not valid JSON: run `cabinet romm pair` again", s.DevicePath())
	}
	p.DeviceID, p.URL, p.Scopes, p.PairedAt, p.ExpiresAt, p.ReportSince = d.DeviceID, d.URL, d.Scopes, d.PairedAt, d.ExpiresAt, d.ReportSince
	return p, nil
}

// TokenFor is the paired token when it was paired with rommURL, ErrNotPaired when there is none
// and ErrOtherServer when it belongs to another address (it is never sent elsewhere).
func (s Store) TokenFor(rommURL string) (string, error) {
	p, err := s.Load()
	if err != nil {
		return "", err
	}
	if !sameURL(p.URL, rommURL) {
		return "", ErrOtherServer
	}
	return p.Token, nil
}

func sameURL(a, b string) bool {
	return a != "" && strings.EqualFold(strings.TrimRight(a, "/"), strings.TrimRight(b, "/"))
}

// Save stores p, replacing an earlier pairing.
func (s Store) Save(p Paired) error {
	if err := checkToken(p.Token); err != nil {
		return fmt.Errorf("save the RomM pairing: the token %v", err)
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("save the RomM pairing: %w", err)
	}
	d, err := json.MarshalIndent(device{DeviceID: p.DeviceID, URL: p.URL, Scopes: p.Scopes,
		PairedAt: p.PairedAt.UTC(), ExpiresAt: p.ExpiresAt.UTC(), ReportSince: p.ReportSince.UTC()}, "", "  ")
	if err != nil {
		return fmt.Errorf("save the RomM pairing: %w", err)
	}
	if err := writeAtomic(s.Dir, deviceFile, append(d, '\n')); err != nil {
		return fmt.Errorf("save the RomM pairing: %w", err)
	}
	if err := writeAtomic(s.Dir, tokenFile, []byte(p.Token+"\n")); err != nil {
		return fmt.Errorf("save the RomM pairing: %w", err)
	}
	return nil
}

// SetDevice records a new device id for the stored pairing (the daemon's
// re-registration after RomM forgot the device), keeping the rest.
func (s Store) SetDevice(id string) error {
	p, err := s.Load()
	if err != nil {
		return err
	}
	p.DeviceID = id
	return s.Save(p)
}

// Forget removes the pairing: the token first, so no reader sees a device without it. Forgetting
// nothing is not an error.
func (s Store) Forget() error {
	for _, p := range []string{s.TokenPath(), s.DevicePath()} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("forget the RomM pairing: %w", err)
		}
	}
	syncDir(s.Dir)
	return nil
}

// checkToken accepts what can go in an Authorization header: one word, at most maxToken bytes.
// It never quotes the token.
func checkToken(t string) error {
	switch {
	case t == "":
		return errors.New("is empty")
	case len(t) > maxToken:
		return fmt.Errorf("is longer than %d characters", maxToken)
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; c <= ' ' || c >= 0x7f {
			return errors.New("holds spaces or characters a token cannot have")
		}
	}
	return nil
}

// writeAtomic writes dir/name through a temporary file in dir (created 0600 by os.CreateTemp),
// synced before the rename and the directory after it.
func writeAtomic(dir, name string, data []byte) error {
	tmp, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up on failure
	if _, err = tmp.Write(data); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename or removal durable; best effort (exFAT and some FUSE file systems refuse).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
