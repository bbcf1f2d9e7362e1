package stage

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
)

const (
	// stagePrefix names a stage folder; a leftover of a crash is
	// recognisable by it. The leading dot keeps ES out (see the package
	// comment).
	stagePrefix = ".cabinet-install-"
	// partSuffix marks a file still downloading. No ES system accepts it as
	// an extension, so even with ShowHiddenFiles on nothing of a set in
	// progress is listed.
	partSuffix = ".cabinet-part"
	// metaName is the caller's description of the install, kept so a leftover
	// can be reported and cleaned up after a crash.
	metaName = "install.json"
	// filesDir holds the game's files inside the stage, apart from metaName,
	// so no file of the set can collide with it; for a folder commit it is
	// the folder that is renamed into place.
	filesDir = "files"
	// playlistPart is where Commit writes the playlist before renaming it
	// into the system folder: inside the stage, so a crash leaves no stray
	// file among the games.
	playlistPart = "playlist" + partSuffix
	// maxKey bounds the caller's install id.
	maxKey = 64
	// maxMeta bounds install.json; Leftovers reads no more than this.
	maxMeta = 64 << 10
)

// Stage is one install in progress: a hidden folder inside the system folder
// where the files are downloaded, then moved into place by Commit.
//
// PartPath may be called from several goroutines; Commit and Abort serialise
// with it.
type Stage struct {
	mu        sync.Mutex
	systemDir string // resolved with EvalSymlinks at Begin
	key       string
	dir       string // systemDir/.cabinet-install-<key>
	files     string // dir/files
	closed    bool   // committed or aborted
	// rename is renameNoReplace; tests replace it to fail a chosen step
	// and check the undo.
	rename func(from, to string) error
}

// Begin creates the stage folder "<systemDir>/.cabinet-install-<key>/" and
// writes meta to its install.json (atomically, then fsynced).
//
// key is the caller's id for the install, such as "romm-123": lowercase
// ASCII letters, digits and '-', at most 64 bytes. meta is at most 64 KiB.
//
// systemDir must exist and must not itself be a symlink: a link at
// /userdata/roms/psx could send every write elsewhere, so Begin refuses it
// (wrapping ErrUnsafe) rather than guess whether its target is trusted.
// Links above it (a symlinked /userdata, a test's temporary folder) are
// resolved; the Stage then works in, and returns paths under, the resolved
// folder. A stage for the same key that is already there is refused with
// ErrExists: it is a leftover (see Leftovers) or an install still running.
func Begin(systemDir, key string, meta []byte) (*Stage, error) {
	if err := validKey(key); err != nil {
		return nil, fmt.Errorf("begin install: %w", err)
	}
	if len(meta) > maxMeta {
		return nil, fmt.Errorf("begin install %s: metadata is %d bytes, at most %d are kept", key, len(meta), maxMeta)
	}
	sys, err := resolveSystemDir(systemDir)
	if err != nil {
		return nil, fmt.Errorf("begin install %s: %w", key, err)
	}
	s := &Stage{
		systemDir: sys,
		key:       key,
		dir:       filepath.Join(sys, stagePrefix+key),
		rename:    renameNoReplace,
	}
	s.files = filepath.Join(s.dir, filesDir)
	if err := os.Mkdir(s.dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("begin install %s: %s is already there; abort the install using it or remove the leftover (cabinet doctor lists it): %w", key, s.dir, ErrExists)
		}
		return nil, fmt.Errorf("begin install %s: %w", key, err)
	}
	if err := s.setUp(meta); err != nil {
		_ = os.RemoveAll(s.dir)
		return nil, fmt.Errorf("begin install %s: %w", key, err)
	}
	return s, nil
}

func (s *Stage) setUp(meta []byte) error {
	if err := os.Mkdir(s.files, 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(s.dir, metaName+partSuffix)
	if err := writeSynced(tmp, meta); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, metaName)); err != nil {
		return err
	}
	if err := syncDir(s.dir); err != nil {
		return err
	}
	// The stage folder itself must survive a power cut, or its leftover
	// could not be found.
	return syncDir(s.systemDir)
}

// resolveSystemDir refuses a system folder that is a symlink and returns
// its fully resolved path.
func resolveSystemDir(systemDir string) (string, error) {
	abs, err := filepath.Abs(systemDir)
	if err != nil {
		return "", err
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return "", fmt.Errorf("system folder: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(abs)
		return "", fmt.Errorf("system folder %s is a symlink to %s; install into the real folder instead: %w", abs, target, ErrUnsafe)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("system folder %s is not a folder", abs)
	}
	return filepath.EvalSymlinks(abs)
}

// validKey accepts the caller's install id: [a-z0-9-], 1 to 64 bytes, so it
// is safe inside a file name and recognisable in Leftovers.
func validKey(key string) error {
	if key == "" || len(key) > maxKey {
		return fmt.Errorf("install key %q: want 1 to %d characters", key, maxKey)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("install key %q: only a-z, 0-9 and '-' are allowed", key)
		}
	}
	return nil
}

// SystemDir returns the resolved system folder the stage installs into.
func (s *Stage) SystemDir() string { return s.systemDir }

// Dir returns the stage folder.
func (s *Stage) Dir() string { return s.dir }

// PartPath returns where the caller writes file rel while downloading it:
// "<stage>/files/<rel>.cabinet-part", with its parent folders created (0755).
// rel must be a CleanRelPath result, relative to the game: the single file's
// name, or a path inside Commit.Folder. Opening the file, and resuming from
// its size, is the caller's business.
func (s *Stage) PartPath(rel string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", fmt.Errorf("part path %q: the install %s is already committed or aborted", rel, s.key)
	}
	if err := isClean(rel); err != nil {
		return "", fmt.Errorf("part path: %w", err)
	}
	p := filepath.Join(s.files, filepath.FromSlash(partOf(rel)))
	if !inside(s.files, p) {
		return "", fmt.Errorf("part path %q: %s is outside the stage: %w", rel, p, ErrUnsafe)
	}
	if err := noSymlinks(s.systemDir, p); err != nil {
		return "", fmt.Errorf("part path %q: %w", rel, err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("part path %q: %w", rel, err)
	}
	if err := parentInside(s.files, p); err != nil {
		return "", fmt.Errorf("part path %q: %w", rel, err)
	}
	return p, nil
}

// partOf is where the cleaned relative path rel is downloaded, relative to the files folder:
// rel with partSuffix. When the suffix would take its last element past maxNameBytes (a name of
// more than 242 bytes, which CleanName allows), that element is cut and given a hash of itself
// instead, so two long names that start alike stay apart.
func partOf(rel string) string {
	dir, base := path.Split(rel)
	if len(base)+len(partSuffix) <= maxNameBytes {
		return rel + partSuffix
	}
	sum := sha256.Sum256([]byte(base))
	return dir + cutRunes(base, maxNameBytes-len(partSuffix)-9) + "~" + hex.EncodeToString(sum[:4]) + partSuffix
}

// isClean refuses a relative path that CleanRelPath would change: the
// caller must clean names from the server before they reach the stage.
func isClean(rel string) error {
	c, err := CleanRelPath(rel)
	if err != nil {
		return err
	}
	if c != rel {
		return fmt.Errorf("%q is not a cleaned path (CleanRelPath gives %q); clean server names before staging", rel, c)
	}
	return nil
}

// Abort removes the stage folder and everything in it. It is safe to call
// after Commit (it does nothing then) and more than once.
func (s *Stage) Abort() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("abort install %s: %w; remove %s by hand", s.key, err, s.dir)
	}
	s.closed = true
	return nil
}
