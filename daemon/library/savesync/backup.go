package savesync

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Backups are Cabinet's copies of the saves a sync replaced, in
// <saves>/.cabinet-backup/<system>/<file>.<time>, and RomM's side of a conflict,
// <file>.romm-<time> beside them. The newest Keep backups of each save are kept and, across the
// folder, at most MaxBytes (the oldest go first; a conflict's copy stays until it is resolved).
type Backups struct {
	Dir      string
	Keep     int
	MaxBytes int64
}

// Defaults of cabinet.romm.save_backups and cabinet.romm.save_backup_bytes.
const (
	DefaultKeep     = 5
	DefaultMaxBytes = 256 << 20
)

// stampLayout names a copy by the moment it was made (UTC, sortable, no separator or colon).
const stampLayout = "2006-01-02T15-04-05.000Z"

// tempPrefix starts the name of a file being written; a crash leaves it, the next sync removes it.
const tempPrefix = ".cabinet-tmp-"

// Backup copies the file at path (in system's saves) into the backup folder, fsynced, and returns
// the copy's path. Nothing else is done with path: an error means the caller must not replace it.
func (b Backups) Backup(system, path string, now time.Time) (string, error) {
	dst := b.name(system, filepath.Base(path), "", now)
	if err := copySynced(path, dst); err != nil {
		return "", fmt.Errorf("back up %s before it is replaced: %w (free some space in /userdata, or lower cabinet.romm.save_backups)", path, err)
	}
	b.prune(system, filepath.Base(path), dst)
	return dst, nil
}

// RomMCopy is where RomM's side of a conflict is kept.
func (b Backups) RomMCopy(system, file string, now time.Time) string {
	return b.name(system, file, "romm-", now)
}

func (b Backups) name(system, file, tag string, now time.Time) string {
	return filepath.Join(b.Dir, system, file+"."+tag+now.UTC().Format(stampLayout))
}

// Copy is one file in the backup folder.
type Copy struct {
	Path   string    `json:"path"`
	Save   string    `json:"save"` // the save's file name
	RomM   bool      `json:"romm"` // RomM's side of a conflict, not a backup
	Size   int64     `json:"size"`
	MadeAt time.Time `json:"made_at"`
	System string    `json:"system"`
}

// List is every copy in the backup folder, newest first.
func (b Backups) List() []Copy {
	var out []Copy
	systems, _ := os.ReadDir(b.Dir)
	for _, s := range systems {
		if !s.IsDir() {
			continue
		}
		out = append(out, b.listSystem(s.Name())...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MadeAt.After(out[j].MadeAt) })
	return out
}

func (b Backups) listSystem(system string) []Copy {
	ents, _ := os.ReadDir(filepath.Join(b.Dir, system))
	var out []Copy
	for _, e := range ents {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		c, ok := parseCopy(e.Name())
		if !ok {
			continue
		}
		if fi, err := e.Info(); err == nil {
			c.Size = fi.Size()
		}
		c.Path, c.System = filepath.Join(b.Dir, system, e.Name()), system
		out = append(out, c)
	}
	return out
}

func parseCopy(name string) (Copy, bool) {
	n := len(stampLayout)
	if len(name) < n+2 || name[len(name)-n-1] != '.' && name[len(name)-n-1] != '-' {
		return Copy{}, false
	}
	at, err := time.Parse(stampLayout, name[len(name)-n:])
	if err != nil {
		return Copy{}, false
	}
	rest := name[:len(name)-n-1]
	if name[len(name)-n-1] == '-' { // <file>.romm-<stamp>
		save, ok := strings.CutSuffix(rest, ".romm")
		if !ok || save == "" {
			return Copy{}, false
		}
		return Copy{Save: save, RomM: true, MadeAt: at}, true
	}
	if rest == "" {
		return Copy{}, false
	}
	return Copy{Save: rest, MadeAt: at}, true
}

// Bytes is the size of the backup folder.
func (b Backups) Bytes() int64 {
	var n int64
	for _, c := range b.List() {
		n += c.Size
	}
	return n
}

// prune keeps the newest Keep backups of file and the folder within MaxBytes; keep is never
// removed, nor is RomM's side of a conflict.
func (b Backups) prune(system, file, keep string) {
	n := 0
	for _, c := range b.listSystem(system) {
		if c.Save == file && !c.RomM {
			n++
		}
	}
	copies := b.listSystem(system)
	sort.Slice(copies, func(i, j int) bool { return copies[i].MadeAt.Before(copies[j].MadeAt) })
	keepN := b.Keep
	if keepN <= 0 {
		keepN = DefaultKeep
	}
	for _, c := range copies {
		if n <= keepN {
			break
		}
		if c.Save == file && !c.RomM && c.Path != keep {
			if os.Remove(c.Path) == nil {
				n--
			}
		}
	}
	max := b.MaxBytes
	if max <= 0 {
		max = DefaultMaxBytes
	}
	all := b.List()
	var total int64
	for _, c := range all {
		total += c.Size
	}
	for i := len(all) - 1; i >= 0 && total > max; i-- { // oldest first
		c := all[i]
		if c.RomM || c.Path == keep {
			continue
		}
		if os.Remove(c.Path) == nil {
			total -= c.Size
		}
	}
}

// copySynced copies src to dst (temp + fsync + rename), creating dst's folder.
func copySynced(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	_, _, err = writeSynced(dst, io.LimitReader(in, MaxSaveBytes+1), MaxSaveBytes, "", nil)
	return err
}

// writeSynced writes r to path the safe way: a temp file in path's folder (created if need be),
// fsynced, checked (at most max bytes; its md5 equal to want when want is set; ready, when set,
// agreeing at the last moment), renamed over path, the folder fsynced. On any error path is as it
// was and the temp file is gone. It returns the bytes written and their md5.
func writeSynced(path string, r io.Reader, max int64, want string, ready func() error) (int64, string, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, "", err
	}
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return 0, "", err
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	h := md5.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(r, max+1))
	if err != nil {
		return n, "", err
	}
	if n > max {
		return n, "", fmt.Errorf("%w (over %d MiB)", ErrTooLarge, max>>20)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if want != "" && sum != want {
		return n, sum, fmt.Errorf("%w: RomM listed %s, the bytes are %s", ErrHashMismatch, want, sum)
	}
	if err := f.Sync(); err != nil {
		return n, sum, err
	}
	if err := f.Close(); err != nil {
		return n, sum, err
	}
	if ready != nil {
		if err := ready(); err != nil {
			os.Remove(tmp)
			done = true
			return n, sum, err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return n, sum, err
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return n, sum, nil
}

// ErrHashMismatch is wrapped when RomM's bytes are not those its content_hash names.
var ErrHashMismatch = errors.New("the download does not match RomM's content_hash")

// removeTemps removes what a crash left of writes in dir.
func removeTemps(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tempPrefix) && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
