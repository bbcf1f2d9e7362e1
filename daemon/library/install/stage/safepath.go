package stage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrUnsafe is wrapped when a path would leave the system folder: a symlink
// in the way, or a system folder that is itself a symlink.
var ErrUnsafe = errors.New("path would leave the system folder")

// ErrExists is wrapped when a file or folder Commit would create is already
// in the system folder. Commit never overwrites; the caller decides.
var ErrExists = errors.New("already in the system folder")

// inside reports whether p, once cleaned, is root itself or a path below it.
// Both must be absolute; a relative path is never inside.
func inside(root, p string) bool {
	if !filepath.IsAbs(root) || !filepath.IsAbs(p) {
		return false
	}
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(p))
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// noSymlinks checks with Lstat every existing element of p below root and
// refuses a symlink. Following one planted in the system folder could write
// a game anywhere the daemon may write. Elements that do not exist yet end the
// walk: there is nothing to follow.
func noSymlinks(root, p string) error {
	if !inside(root, p) {
		return fmt.Errorf("%s is outside %s: %w", p, root, ErrUnsafe)
	}
	rel, _ := filepath.Rel(filepath.Clean(root), filepath.Clean(p))
	if rel == "." {
		return nil
	}
	cur := filepath.Clean(root)
	for _, e := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, e)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symlink; remove it, installs never follow links: %w", cur, ErrUnsafe)
		}
	}
	return nil
}

// parentInside resolves the parent folder of p and checks it is still inside
// root, catching a link anywhere above p that noSymlinks did not see (root
// itself replaced after Begin, say).
func parentInside(root, p string) error {
	real, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return err
	}
	if !inside(root, real) {
		return fmt.Errorf("%s resolves to %s, outside %s: %w", filepath.Dir(p), real, root, ErrUnsafe)
	}
	return nil
}

// syncDir makes the renames and creations in dir durable: without it a power
// cut can leave the rename unwritten even though the file data is on disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncFile flushes a file already written and closed by the caller.
func syncFile(p string) error {
	f, err := os.OpenFile(p, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeSynced creates p (which must not exist), writes data and fsyncs it.
func writeSynced(p string, data []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(p)
	}
	return err
}
