package config

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
)

// CabinetID returns cabinet.id when set, else the persisted id, else "" (not
// generated yet). It never writes.
func (c *Config) CabinetID() (string, error) {
	if c.ID != "" {
		return c.ID, nil
	}
	file := c.Layout().ID()
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read cabinet id: %w", err)
	}
	id := strings.TrimSpace(string(b))
	if !IsCabinetID(id) {
		return "", fmt.Errorf("cabinet id file %s holds %q, not [a-z0-9_]: delete it to generate a new id (Home Assistant then sees a new device) or set cabinet.id", file, clip(id))
	}
	return id, nil
}

// EnsureCabinetID returns the cabinet id, generating and persisting one (12
// random [a-z0-9] characters, written with fsync and rename) the first time.
func (c *Config) EnsureCabinetID() (string, error) {
	id, err := c.CabinetID()
	if err != nil || id != "" {
		return id, err
	}
	dir := c.StatePath()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create state dir: %w", err)
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate cabinet id: %w", err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	id = string(b)
	tmp, err := os.CreateTemp(dir, ".id-*")
	if err != nil {
		return "", fmt.Errorf("write cabinet id: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(id + "\n"); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write cabinet id: %w", err)
	}
	final := c.Layout().ID()
	// Link instead of rename: if another process won the race, keep its id.
	if err := os.Link(tmp.Name(), final); err != nil && !errors.Is(err, os.ErrExist) {
		// Filesystems without hard links (vfat): fall back to rename.
		if rerr := os.Rename(tmp.Name(), final); rerr != nil {
			return "", fmt.Errorf("write cabinet id: %w", rerr)
		}
	}
	return c.CabinetID()
}
