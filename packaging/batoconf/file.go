package batoconf

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ReadFile reads a batocera.conf of at most MaxSize bytes. A missing file
// reads as empty with no error, as batocera-settings-set treats it (Set
// then creates it).
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read batocera.conf: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read batocera.conf: %w", err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("read batocera.conf: %s is more than %d bytes, too large for a batocera.conf: check what wrote it", path, MaxSize)
	}
	return data, nil
}

// WriteFile replaces the file at path with data atomically: it writes a
// temporary file in the same directory, syncs it, renames it over path and
// syncs the directory. The file keeps its mode (0644 when new); a symlink
// at path is followed, so the link stays and its target is replaced.
//
// batocera-settings-set rewrites the file in place (fopen "w", then
// fwrite). We do not: a cabinet is often switched off at the wall, and a
// reader (ES, S99userservices at boot) can open the file between the
// truncation and the write. Either way an in-place rewrite can leave an
// empty or half-written batocera.conf, which loses every setting of the
// machine; after a rename a reader sees the old file or the new one. ES's
// own save writes a temporary file and replaces the original too.
func WriteFile(path string, data []byte) error {
	if len(data) > MaxSize {
		return fmt.Errorf("write batocera.conf: %d bytes is more than the %d a batocera.conf can be: not writing it", len(data), MaxSize)
	}
	return Replace(path, data, "batocera.conf")
}

// Replace is WriteFile for any of Batocera's configuration files (name
// says which in errors: "es_settings.cfg"), without batocera.conf's size
// bound.
func Replace(path string, data []byte, name string) error {
	target, mode, err := replaceTarget(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer func() {
		if tmp != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	// CreateTemp makes 0600. Where /userdata has no Unix modes (exFAT,
	// vfat) chmod is ignored or refused, and every file there has the
	// mount's mode anyway, so a refusal is no error.
	if err := tmp.Chmod(mode); err != nil && !ignorable(err) {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	tmp = nil
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// replaceTarget resolves a symlink at path and returns the file to
// replace and the mode the new one gets.
func replaceTarget(path string) (string, fs.FileMode, error) {
	target := path
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err = filepath.EvalSymlinks(path); err != nil {
			return "", 0, err
		}
	}
	fi, err := os.Stat(target)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return "", 0, fmt.Errorf("%s is not a regular file: point at the file itself", target)
	case err == nil:
		return target, fi.Mode().Perm(), nil
	case errors.Is(err, fs.ErrNotExist):
		return target, 0o644, nil
	}
	return "", 0, err
}

// syncDir makes the rename durable. Filesystems that cannot sync a
// directory (some FUSE ones) say so with EINVAL or ENOTSUP: the rename
// then lasts as long as that filesystem makes anything last.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !ignorable(err) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// ignorable is an error of an operation the filesystem does not support.
func ignorable(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.ENOSYS)
}
