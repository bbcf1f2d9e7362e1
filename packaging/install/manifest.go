package install

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
)

// manifest is what an install wrote, kept in the state dir so uninstall
// removes exactly that (and leaves a file someone changed since) and the
// next install keeps the choices of the last one.
type manifest struct {
	Version       string         `json:"version"`
	Commit        string         `json:"commit,omitempty"`
	Binary        string         `json:"binary_sha256"`
	Service       string         `json:"service"`
	Files         []manifestFile `json:"files"`
	Dirs          []string       `json:"dirs,omitempty"`
	Keys          []string       `json:"saved_keys,omitempty"`
	ClosePort     bool           `json:"close_retroarch_port,omitempty"`
	RetroArchPort int            `json:"retroarch_port,omitempty"`
}

type manifestFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// maxManifest bounds the file read back: a few hundred paths at most.
const maxManifest = 1 << 20

func readManifest(path string) (manifest, error) {
	var m manifest
	b, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	if len(b) > maxManifest {
		return m, fmt.Errorf("%s is larger than an install record can be", path)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return manifest{}, fmt.Errorf("read %s: %w", path, err)
	}
	return m, nil
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func (m *manifest) addFile(path string, content []byte) {
	s := sum(content)
	for i := range m.Files {
		if m.Files[i].Path == path {
			m.Files[i].SHA256 = s
			return
		}
	}
	m.Files = append(m.Files, manifestFile{Path: path, SHA256: s})
}

func (m *manifest) addKey(k string) {
	if !slices.Contains(m.Keys, k) {
		m.Keys = append(m.Keys, k)
	}
}

// merge keeps what an earlier install recorded (files it wrote that this
// one no longer renders are still Cabinet's to remove).
func (m *manifest) merge(prev manifest) {
	for _, f := range prev.Files {
		if !slices.ContainsFunc(m.Files, func(g manifestFile) bool { return g.Path == f.Path }) {
			m.Files = append(m.Files, f)
		}
	}
	for _, d := range prev.Dirs {
		if !slices.Contains(m.Dirs, d) {
			m.Dirs = append(m.Dirs, d)
		}
	}
	for _, k := range prev.Keys {
		m.addKey(k)
	}
}

// write stores the manifest, leaving the file untouched when it already
// says the same (a second install changes nothing).
func (m *manifest) write(path string) error {
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
	sort.Strings(m.Dirs)
	sort.Strings(m.Keys)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if _, err := ensureDir(filepath.Dir(path)); err != nil {
		return err
	}
	return writeFile(path, b, 0o644)
}
