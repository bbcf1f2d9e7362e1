package rommreport

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"

	"github.com/batocera-cabinet/cabinet/daemon/library/romhash"
	"github.com/batocera-cabinet/cabinet/haentities"
)

// ErrUnknown is what a lookup returns when RomM does not have the game.
var ErrUnknown = errors.New("RomM does not have this game")

// Lookup finds RomM ROMs: by the hashes RomM computes (GET
// /api/roms/by-hash), and by file name within the RomM platforms of a
// Batocera system folder. Both return ErrUnknown when RomM has no match.
type Lookup interface {
	ByHash(ctx context.Context, crc, md5, sha1 string) (int, error)
	ByName(ctx context.Context, folder, fileName string, size int64) (int, error)
}

// FileResolver resolves a session's ROM file to RomM: the file's hashes
// the way RomM computes them (a zip by its contents), else its name and
// size within the system's platforms. Answers are kept per ROM path.
//
// Not RetroArch's GET_STATUS crc32: read in RetroArch's content.c
// (content_file_load and content_file_load_into_memory), it is the CRC of
// the whole file for a plain ROM — RomM's too — but of the first member
// (alphabetically, of the core's extensions) for a zip the core has
// RetroArch extract, of the whole archive's bytes for a core that takes
// the zip itself (MAME, FBNeo: block_extract), of the patched data when a
// soft patch applies, and 0 for media types. RomM hashes a zip by all its
// members' contents, so the two agree only for plain files and
// single-member zips of extracting cores; the file itself, which the
// cabinet has, matches in every case RomM's rule does.
type FileResolver struct {
	Lookup Lookup
	// Path maps the ROM path a session logged to the file on this machine
	// (cabinet.paths.root in tests); nil: the same path.
	Path func(string) string
	// Limits bound hashing (a huge file is matched by name only).
	Limits romhash.Limits
	// Installed, when set, is looked at first: the RomM id of a game
	// Cabinet installed from this RomM (its install record), by ROM path.
	Installed func(rom string) (id int, ok bool)

	mu    sync.Mutex
	cache map[string]int // ROM path → RomM id (0: unknown)
}

// maxCache bounds the answers kept: a cabinet plays far fewer games.
const maxCache = 4096

// ROMID implements Resolver.
func (f *FileResolver) ROMID(ctx context.Context, s haentities.Session) (int, bool, error) {
	if s.Rom == "" {
		return 0, false, nil
	}
	f.mu.Lock()
	id, ok := f.cache[s.Rom]
	f.mu.Unlock()
	if ok {
		return id, id > 0, nil
	}
	id, err := f.lookup(ctx, s)
	if err != nil && !errors.Is(err, ErrUnknown) {
		return 0, false, err
	}
	f.mu.Lock()
	if f.cache == nil || len(f.cache) >= maxCache {
		f.cache = map[string]int{}
	}
	f.cache[s.Rom] = id
	f.mu.Unlock()
	return id, id > 0, nil
}

func (f *FileResolver) lookup(ctx context.Context, s haentities.Session) (int, error) {
	if f.Installed != nil {
		if id, ok := f.Installed(s.Rom); ok {
			return id, nil
		}
	}
	path := s.Rom
	if f.Path != nil {
		path = f.Path(path)
	}
	var size int64 = -1
	if sums, err := romhash.FileContext(ctx, path, f.Limits); err == nil && (sums.CRC != "" || sums.SHA1 != "") {
		id, err := f.Lookup.ByHash(ctx, sums.CRC, sums.MD5, sums.SHA1)
		if err == nil || !errors.Is(err, ErrUnknown) {
			return id, err
		}
	} else if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	if fi, err := statSize(path); err == nil {
		size = fi
	}
	return f.Lookup.ByName(ctx, s.System, filepath.Base(s.Rom), size)
}

func statSize(p string) (int64, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
