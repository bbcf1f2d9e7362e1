package install

import (
	"errors"
	"fmt"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/store"
)

// installs are the games Cabinet installed from the household's RomM: what it wrote, so that it
// can tell its own files from the user's (uninstall removes only those, and only unchanged), and
// so that the on-cabinet marking and RomM's reporting find the game's RomM id without hashing
// anything. Keyed by the game's path as EmulationStation lists it.
var installs = store.Records[Install]{Name: "installs"}

// InstalledFile is one file an install wrote.
type InstalledFile struct {
	Path string `json:"path"` // absolute, as on the cabinet
	Size int64  `json:"size"`
	// SHA1 is of the file's bytes as written (not RomM's hash of an archive's contents):
	// uninstall compares it to see a change.
	SHA1 string `json:"sha1"`
}

// Install is the record of one installed game.
type Install struct {
	// Path is the game's path as ES lists it (the ROM file, or the .m3u of a multi-disc
	// game): the key.
	Path   string `json:"path"`
	System string `json:"system"`
	// GameID is ES's id of the game once ES listed it; "" before.
	GameID string `json:"game_id,omitempty"`
	// Listed: ES lists the game and its metadata and cover are set. False while ES could not
	// reload (a game was running): the daemon finishes.
	Listed bool   `json:"listed"`
	ROMID  int    `json:"rom_id"`
	RomM   string `json:"romm"` // RomM's base URL the game came from
	Name   string `json:"name"`
	// Folder is the folder the install created for a multi-file game, "" for one file.
	Folder string          `json:"folder,omitempty"`
	Files  []InstalledFile `json:"files"`
	// Media are files ES wrote for the game's metadata (its cover).
	Media       []string  `json:"media,omitempty"`
	Bytes       int64     `json:"bytes"`
	Verified    bool      `json:"verified"`
	InstalledAt time.Time `json:"installed_at"`
}

// maxInstalls bounds the records kept: far more games than a cabinet is given by hand.
const maxInstalls = 100000

// ErrNoInstall: no install record for that game.
var ErrNoInstall = errors.New("not installed by Cabinet")

// Kept is the install records in the store: Records on a cabinet.
type Kept struct{ DB *store.Store }

// PutInstall records (or replaces) an install.
func (k Kept) PutInstall(in Install) error {
	if in.Path == "" {
		return errors.New("record an install: no game path")
	}
	return installs.Update(k.DB, func(b store.Bucket[Install]) error {
		if !b.Has(in.Path) && b.Len() >= maxInstalls {
			return fmt.Errorf("record an install: %d games are recorded already; uninstall some", maxInstalls)
		}
		return b.Put(in.Path, in)
	})
}

// InstallAt is the record of the game at path, ErrNoInstall when none.
func (k Kept) InstallAt(path string) (Install, error) {
	var in Install
	err := installs.View(k.DB, func(b store.Bucket[Install]) error {
		got, ok, err := b.Get(path)
		switch {
		case err != nil:
			return err
		case !ok:
			return ErrNoInstall
		}
		in = got
		return nil
	})
	return in, err
}

// Installs lists every record, in path order. A record that does not decode is skipped.
func (k Kept) Installs() ([]Install, error) {
	var out []Install
	err := installs.View(k.DB, func(b store.Bucket[Install]) error {
		return b.Each(func(_ string, in Install) error {
			out = append(out, in)
			return nil
		})
	})
	return out, err
}

// DeleteInstall forgets the record of the game at path.
func (k Kept) DeleteInstall(path string) error {
	return installs.Update(k.DB, func(b store.Bucket[Install]) error { return b.Delete(path) })
}
