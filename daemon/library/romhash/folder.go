package romhash

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Folder hashes a multi-file ROM (a folder in the platform folder); see FolderContext.
func Folder(dir string, lim Limits) (Sums, error) {
	return FolderContext(context.Background(), dir, lim)
}

// FolderContext reproduces RomM's multi-file ROM branch (get_rom_files, roms_handler.py L366-460):
// every file under the folder at any depth (os.walk, symlinked folders not entered), less the
// excluded names and extensions, becomes a RomFile hashed by the per-file rule of
// _calculate_rom_hashes (a .zip inside a folder is hashed by its largest member, never as a
// composite). Those are Files, with their blanked hashes, in path order.
//
// The ROM-level hash is the concatenation of the top-level files in os.walk order, which is the
// server's directory order (unsorted), so it cannot be reproduced in general: CRC/MD5/SHA1 are
// set only when the folder has at most one top-level file, where order does not matter. Compare
// Files instead.
//
// Limits: MaxMembers bounds the files, MaxFileBytes each file, MaxExpandedBytes the whole call.
func FolderContext(ctx context.Context, dir string, lim Limits) (Sums, error) {
	h := newHasher(ctx, lim)
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				return nil // os.walk lists it among the folders and does not follow it
			}
		}
		if excluded(d.Name()) {
			return nil
		}
		if len(files) >= h.lim.MaxMembers {
			return fmt.Errorf("folder holds over %d files: %w", h.lim.MaxMembers, ErrTooLarge)
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return Sums{}, fmt.Errorf("hash rom folder: %w", err)
	}
	var s Sums
	var top []int
	for _, p := range files {
		rel, _ := filepath.Rel(dir, p)
		m, err := h.folderFile(p)
		if err != nil {
			return Sums{}, err
		}
		m.Name = filepath.ToSlash(rel)
		if filepath.Dir(rel) == "." {
			top = append(top, len(s.Files))
		}
		s.Files = append(s.Files, m)
	}
	if len(top) == 1 {
		f := s.Files[top[0]]
		s.CRC, s.MD5, s.SHA1 = f.CRC, f.MD5, f.SHA1
	}
	return s, nil
}

// folderFile hashes one file of a folder ROM. Corrupt compressed data leaves its hashes blank, as
// RomM's zlib.error handler does (L434-437).
func (h *hasher) folderFile(p string) (Member, error) {
	f, size, err := h.open(p)
	if err != nil {
		return Member{}, err
	}
	defer f.Close()
	m := Member{Size: size}
	d, err := h.partFile(f, size, filepath.Base(p))
	if errors.Is(err, ErrNoHash) {
		return m, nil
	}
	if err != nil {
		return Member{}, err
	}
	m.CRC, m.MD5, m.SHA1 = d.blanked()
	return m, nil
}
