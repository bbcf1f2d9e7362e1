package stage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

const noFollow = unix.O_NOFOLLOW

// renameNoReplace renames from to to and fails with ErrExists if to exists,
// atomically where the filesystem supports RENAME_NOREPLACE (ext4, btrfs,
// exFAT, vfat, tmpfs). A plain rename would silently replace a file, or an
// empty folder, that appeared after Commit checked.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST), errors.Is(err, unix.ENOTEMPTY):
		return fmt.Errorf("rename %s: %s exists: %w", from, to, ErrExists)
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EINVAL):
		// Old kernels and some FUSE filesystems (ntfs-3g) lack the flag;
		// check then rename, which leaves a small race but still never
		// overwrites what was there at the check.
		if _, serr := os.Lstat(to); serr == nil {
			return fmt.Errorf("rename %s: %s exists: %w", from, to, ErrExists)
		}
		return os.Rename(from, to)
	default:
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
}

// FreeSpace returns the bytes an unprivileged user may still write on the
// filesystem holding path (df's "Avail": Bavail blocks of Bsize bytes). The
// blocks reserved for root are left out on purpose: Batocera runs everything
// as root, and filling them would leave no room for saves, logs or gamelists.
func FreeSpace(path string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", path, err)
	}
	// Bsize is int32 on 32-bit arm and int64 on arm64, amd64 and riscv64;
	// the conversion compiles on all of them and a block size is never
	// negative.
	return st.Bavail * uint64(st.Bsize), nil
}

// mountPoint returns the folder where the filesystem holding path is
// mounted, so a message can say "/userdata" rather than a game's folder. It
// walks up while the device stays the same; on any error it returns path.
func mountPoint(path string) string {
	p, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	var st unix.Stat_t
	if unix.Stat(p, &st) != nil {
		return path
	}
	for p != "/" {
		parent := filepath.Dir(p)
		var pst unix.Stat_t
		if unix.Stat(parent, &pst) != nil || pst.Dev != st.Dev {
			return p
		}
		p = parent
	}
	return p
}
