package stage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Leftover is a stage folder found in a system folder: an install that
// crashed, was killed, or is still running in another process.
type Leftover struct {
	// System is the system folder's name, e.g. "psx".
	System string
	// Key is the install id given to Begin.
	Key string
	// Dir is the stage folder's absolute path.
	Dir string
	// Meta is install.json as Begin wrote it, at most 64 KiB; nil when the
	// crash came before it was written.
	Meta []byte
	// Bytes is the total size of the files downloaded into the stage.
	Bytes int64
	// ModTime is the newest modification time of the stage folder or of
	// anything in it: a download still appending keeps it fresh.
	ModTime time.Time
}

// Leftovers lists the stage folders one level below each system folder of
// romsRoot ("<romsRoot>/<system>/.cabinet-install-<key>"). The installer
// removes them when it starts; cabinet doctor reports them. Symlinked system
// folders are skipped, as Begin never stages in one. When some folders cannot
// be read, Leftovers returns what it found in the others with the error.
func Leftovers(romsRoot string) ([]Leftover, error) {
	root, err := filepath.Abs(romsRoot)
	if err != nil {
		return nil, fmt.Errorf("list leftovers: %w", err)
	}
	systems, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("list leftovers in %s: %w", root, err)
	}
	var (
		out  []Leftover
		errs []error
	)
	for _, sys := range systems {
		if !sys.IsDir() { // a symlink's DirEntry is not a dir
			continue
		}
		sysDir := filepath.Join(root, sys.Name())
		entries, err := os.ReadDir(sysDir)
		if err != nil {
			// One unreadable system folder must not hide the others'
			// leftovers from the installer's clean-up.
			errs = append(errs, fmt.Errorf("list leftovers in %s: %w", sysDir, err))
			continue
		}
		for _, e := range entries {
			key, ok := strings.CutPrefix(e.Name(), stagePrefix)
			if !ok || !e.IsDir() || validKey(key) != nil {
				continue
			}
			l, err := readLeftover(sys.Name(), key, filepath.Join(sysDir, e.Name()))
			if err != nil {
				errs = append(errs, fmt.Errorf("list leftovers: %w", err))
				continue
			}
			out = append(out, l)
		}
	}
	return out, errors.Join(errs...)
}

func readLeftover(system, key, dir string) (Leftover, error) {
	l := Leftover{System: system, Key: key, Dir: dir}
	meta, err := readBounded(filepath.Join(dir, metaName), maxMeta)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return l, err
	}
	l.Meta = meta
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) { // removed while we walk
				return nil
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if fi.ModTime().After(l.ModTime) {
			l.ModTime = fi.ModTime()
		}
		if fi.Mode().IsRegular() && p != filepath.Join(dir, metaName) {
			l.Bytes += fi.Size()
		}
		return nil
	})
	return l, err
}

// readBounded reads at most n bytes of the regular file p, without
// following a symlink planted in its place.
func readBounded(p string, n int64) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// Remove deletes the stage folder and everything in it. It refuses anything
// that is not a real stage folder, so a Leftover built by hand cannot remove
// a game.
func (l Leftover) Remove() error {
	if !strings.HasPrefix(filepath.Base(l.Dir), stagePrefix) || validKey(strings.TrimPrefix(filepath.Base(l.Dir), stagePrefix)) != nil {
		return fmt.Errorf("remove leftover %s: not a stage folder", l.Dir)
	}
	fi, err := os.Lstat(l.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove leftover: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("remove leftover %s: not a folder; remove it by hand", l.Dir)
	}
	if err := os.RemoveAll(l.Dir); err != nil {
		return fmt.Errorf("remove leftover: %w; remove %s by hand", err, l.Dir)
	}
	return nil
}
