package oncabinet

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Find says where ROM romID is on the cabinet, or nil. In order:
//
//  1. the install record (Options.Installed), when ES still lists that game;
//  2. name and size in the mapped folder (subfolders included): for a single file, an ES game
//     whose file name is FSName and whose size is RomM's; for a multi-file ROM, see findMulti;
//  3. content, for a single file RomM has hashes for: cabinet files of the mapped folder whose size
//     is that of a RomM file or archive member, up to MaxHashBytes and MaxHashFiles, hashed the way
//     RomM hashes (romhash) and compared with the RomM file's hashes and its archive members', so a
//     renamed file and an extracted Foo.nes of RomM's Foo.zip are found.
//
// An unmapped ROM (Folder "") is only found through its install record.
func (ix *Index) Find(ctx context.Context, romID int, c Candidate) *Match {
	if ctx.Err() != nil {
		return nil
	}
	if m := ix.installed(romID); m != nil {
		return m
	}
	s := ix.systems[c.Folder]
	if c.Folder == "" || s == nil || !validName(c.FSName) {
		return nil
	}
	if c.Multi {
		return ix.findMulti(ctx, s, c)
	}
	want := c.SizeBytes
	if want <= 0 && len(c.Files) == 1 {
		want = c.Files[0].SizeBytes
	}
	for _, fold := range []bool{false, true} {
		var found *Match
		s.named(c.FSName, fold, func(i int32) bool {
			g := s.games[i]
			if fi, err := os.Stat(ix.o.Resolve(g.Path)); err == nil && fi.Mode().IsRegular() && fi.Size() == want {
				found = match(g, ByNameSize)
			}
			return found != nil
		})
		if found != nil {
			return found
		}
	}
	return ix.findByHash(ctx, s, c)
}

// validName: a RomM fs_name is one path element of sane length; anything else cannot name a file
// of the cabinet and is not looked up.
func validName(n string) bool {
	return n != "" && n != "." && n != ".." && len(n) <= maxNameBytes && !strings.ContainsAny(n, "/\x00")
}

func (ix *Index) installed(romID int) *Match {
	if ix.o.Installed == nil {
		return nil
	}
	g, ok := ix.o.Installed(romID)
	if !ok {
		return nil
	}
	s := ix.systems[g.System]
	if s == nil {
		return nil
	}
	var found *Match
	s.named(baseName(g.Path), false, func(i int32) bool {
		if e := s.games[i]; e.Path == g.Path {
			found = match(e, ByInstall)
		}
		return found != nil
	})
	return found
}

// findMulti matches a multi-file ROM, whose fs_name F is a folder on the server. ES lists the games
// inside a folder with their own paths (a folder is no game of its own, except a folder whose name
// carries a system extension, such as Foo.ps3), so the cabinet copy is one of:
//
//   - a folder F in the system tree: ES lists F itself or games under F/ (Disc 1.cue, F.m3u). It
//     matches when every RomM file is at F/<name> with RomM's size (or, with no file list, when
//     the folder's files add up to RomM's size). The game returned is F itself, else the .m3u
//     in F, else the first game under F by path;
//   - a playlist F.m3u: it matches when every entry it lists is a RomM file (by file name) of
//     RomM's size.
func (ix *Index) findMulti(ctx context.Context, s *system, c Candidate) *Match {
	type folderHit struct {
		dir  string
		best int32
	}
	var hits []folderHit
	seg := "/" + c.FSName
	for i, g := range s.games {
		p := g.Path
		var dir string
		if strings.HasSuffix(p, seg) {
			dir = p
		} else if j := strings.LastIndex(p, seg+"/"); j >= 0 {
			dir = p[:j+len(seg)]
		} else {
			continue
		}
		k := -1
		for h := range hits {
			if hits[h].dir == dir {
				k = h
			}
		}
		if k < 0 {
			hits = append(hits, folderHit{dir: dir, best: int32(i)})
			continue
		}
		if better(g.Path, s.games[hits[k].best].Path, dir) {
			hits[k].best = int32(i)
		}
	}
	for _, h := range hits {
		if ctx.Err() != nil {
			return nil
		}
		if ix.folderMatches(ix.o.Resolve(h.dir), c) {
			return match(s.games[h.best], ByNameSize)
		}
	}
	var found *Match
	s.named(c.FSName+".m3u", false, func(i int32) bool {
		if ix.playlistMatches(ix.o.Resolve(s.games[i].Path), c) {
			found = match(s.games[i], ByNameSize)
		}
		return found != nil
	})
	return found
}

// better ranks the game to stand for a folder: the folder itself, then a playlist, then the
// first path.
func better(p, than, dir string) bool {
	rank := func(p string) int {
		switch {
		case p == dir:
			return 0
		case strings.EqualFold(path.Ext(p), ".m3u"):
			return 1
		}
		return 2
	}
	if rp, rt := rank(p), rank(than); rp != rt {
		return rp < rt
	}
	return p < than
}

func (ix *Index) folderMatches(dir string, c Candidate) bool {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	if len(c.Files) == 0 {
		return c.SizeBytes > 0 && folderSize(dir, c.SizeBytes) == c.SizeBytes
	}
	for _, f := range c.Files {
		if !filepath.IsLocal(f.Name) {
			return false
		}
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Name)))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != f.SizeBytes {
			return false
		}
	}
	return true
}

// folderSize adds up the regular files under dir, stopping once past limit or maxFolderFiles.
func folderSize(dir string, limit int64) int64 {
	var total int64
	n := 0
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			n++
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
			if total > limit || n > maxFolderFiles {
				total = -1
				return filepath.SkipAll
			}
		}
		return nil
	})
	return total
}

const (
	maxFolderFiles   = 10000
	maxPlaylistBytes = 64 << 10
)

func (ix *Index) playlistMatches(m3u string, c Candidate) bool {
	if len(c.Files) == 0 {
		return false
	}
	f, err := os.Open(m3u)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, maxPlaylistBytes+1)
	n, _ := f.Read(buf)
	if n > maxPlaylistBytes {
		return false
	}
	sizes := make(map[string]int64, len(c.Files))
	for _, cf := range c.Files {
		sizes[path.Base(cf.Name)] = cf.SizeBytes
	}
	entries := 0
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(line, "\ufeff"))
		if line == "" || line[0] == '#' {
			continue
		}
		line = filepath.FromSlash(strings.ReplaceAll(line, "\\", "/"))
		if !filepath.IsLocal(line) {
			return false
		}
		want, ok := sizes[filepath.Base(line)]
		if !ok {
			return false
		}
		fi, err := os.Stat(filepath.Join(filepath.Dir(m3u), line))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != want {
			return false
		}
		entries++
	}
	return entries > 0
}
