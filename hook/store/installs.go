package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Games Cabinet installed from the household's RomM: what it wrote, so that
// it can tell its own files from the user's (uninstall removes only those,
// and only unchanged), and so that the on-cabinet marking and RomM's
// reporting find the game's RomM id without hashing anything. Keyed by the
// game's path as EmulationStation lists it. An older Cabinet ignores the
// bucket.
var bInstalls = []byte("installs")

// InstalledFile is one file an install wrote.
type InstalledFile struct {
	Path string `json:"path"` // absolute, as on the cabinet
	Size int64  `json:"size"`
	// SHA1 is of the file's bytes as written (not RomM's hash of an
	// archive's contents): uninstall compares it to see a change.
	SHA1 string `json:"sha1"`
}

// Install is the record of one installed game.
type Install struct {
	// Path is the game's path as ES lists it (the ROM file, or the .m3u of
	// a multi-disc game): the key.
	Path   string `json:"path"`
	System string `json:"system"`
	// GameID is ES's id of the game once ES listed it; "" before.
	GameID string `json:"game_id,omitempty"`
	// Listed: ES lists the game and its metadata and cover are set. False
	// while ES could not reload (a game was running): the daemon finishes.
	Listed bool   `json:"listed"`
	ROMID  int    `json:"rom_id"`
	RomM   string `json:"romm"` // RomM's base URL the game came from
	Name   string `json:"name"`
	// Folder is the folder the install created for a multi-file game, ""
	// for one file.
	Folder string          `json:"folder,omitempty"`
	Files  []InstalledFile `json:"files"`
	// Media are files ES wrote for the game's metadata (its cover).
	Media       []string  `json:"media,omitempty"`
	Bytes       int64     `json:"bytes"`
	Verified    bool      `json:"verified"`
	InstalledAt time.Time `json:"installed_at"`
}

// maxInstalls bounds the records kept: far more games than a cabinet is
// given by hand.
const maxInstalls = 100000

// ErrNoInstall: no install record for that game.
var ErrNoInstall = errors.New("not installed by Cabinet")

// PutInstall records (or replaces) an install.
func (s *Store) PutInstall(in Install) error {
	if in.Path == "" || len(in.Path) > maxKeyLen {
		return fmt.Errorf("record an install: bad game path %q", clip(in.Path))
	}
	v, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bInstalls)
		if err != nil {
			return err
		}
		if b.Get([]byte(in.Path)) == nil && b.Stats().KeyN >= maxInstalls {
			return fmt.Errorf("record an install: %d games are recorded already; uninstall some", maxInstalls)
		}
		return b.Put([]byte(in.Path), v)
	})
}

// InstallAt is the record of the game at path, ErrNoInstall when none.
func (s *Store) InstallAt(path string) (Install, error) {
	var in Install
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bInstalls)
		if b == nil {
			return ErrNoInstall
		}
		v := b.Get([]byte(path))
		if v == nil {
			return ErrNoInstall
		}
		return json.Unmarshal(v, &in)
	})
	return in, err
}

// Installs lists every record, in path order. A record that does not
// decode is skipped.
func (s *Store) Installs() ([]Install, error) {
	var out []Install
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bInstalls)
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, v []byte) error {
			var in Install
			if json.Unmarshal(v, &in) == nil {
				out = append(out, in)
			}
			return nil
		})
	})
	return out, err
}

// DeleteInstall forgets the record of the game at path.
func (s *Store) DeleteInstall(path string) error {
	return s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bInstalls)
		if b == nil {
			return nil
		}
		return b.Delete([]byte(path))
	})
}
