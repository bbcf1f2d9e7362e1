package simulator

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/batocera-cabinet/cabinet/simulator/fakees"
)

// The fake ES reads and writes the fake tree where ES reads and writes a
// cabinet's disk: /reloadgames rescans each system's ROM folder, and media
// uploaded through the API land in the system's images/, videos/ or
// manuals/ folder and are served back from there.

// romsFS is fakees.Config.ROMs: a system's ROM folder in the tree.
func (c *Cabinet) romsFS(system string) fs.FS {
	return os.DirFS(c.Path(c.Library.RomsRoot() + "/" + system))
}

// writeMedia is fakees.Config.WriteFile: an uploaded media file written at
// its cabinet path in the tree, its folder created.
func (c *Cabinet) writeMedia(path string, data []byte) error {
	p, err := c.treePath(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// readMedia is fakees.Config.Media: the media file at its cabinet path in
// the tree, else what the fake ES serves without one (the fixture's media
// paths have no files).
func (c *Cabinet) readMedia(path string) ([]byte, bool) {
	p, err := c.treePath(path)
	if err != nil {
		return nil, false
	}
	data, err := os.ReadFile(p)
	switch {
	case err == nil:
		return data, true
	case errors.Is(err, fs.ErrNotExist):
		return fakees.DefaultMedia(path)
	}
	return nil, false // ES: 200 with an empty body for a file it cannot read
}

// treePath is Path for an absolute cabinet path that must stay inside the
// tree.
func (c *Cabinet) treePath(path string) (string, error) {
	p := c.Path(path)
	rel, err := filepath.Rel(c.Root, p)
	if !strings.HasPrefix(path, "/") || err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", errors.New("simulator: media path " + path + " is outside the tree")
	}
	return p, nil
}
