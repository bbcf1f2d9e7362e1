package openapi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
)

// LoadCached returns a loader for the index of one RomM version. The first successful call reads
// <dir>/romm-openapi-<version>.json, or, when it is missing, too large or corrupt (not a document
// of that version), calls fetch, checks the answer with Parse and writes it atomically; later calls
// return the same index. A failed load is retried on the next call. Concurrent calls wait for one
// load, each within its own context.
//
// A document whose info.version differs from version, or a "development" build, is used but not
// written: its file name would promise a version it is not.
func LoadCached(dir, version string, fetch func(context.Context) ([]byte, error)) func(context.Context) (*Index, error) {
	var (
		sem = make(chan struct{}, 1)
		ix  *Index
	)
	return func(ctx context.Context) (*Index, error) {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("load romm openapi %s: %w", version, ctx.Err())
		}
		defer func() { <-sem }()
		if ix != nil {
			return ix, nil
		}
		loaded, err := load(ctx, dir, version, fetch)
		if err != nil {
			return nil, fmt.Errorf("load romm openapi %s: %w", version, err)
		}
		ix = loaded
		return ix, nil
	}
}

func load(ctx context.Context, dir, version string, fetch func(context.Context) ([]byte, error)) (*Index, error) {
	if !validVersion(version) {
		return nil, fmt.Errorf("version %q is not usable in a file name; check what the server's heartbeat reports", version)
	}
	file := filepath.Join(dir, "romm-openapi-"+version+".json")
	if doc, err := bounded.ReadFile(file, MaxDocumentBytes); err == nil {
		if ix, err := Parse(doc); err == nil && ix.Version() == version {
			return ix, nil
		}
		// Corrupt or of another version: fall through and fetch a fresh copy over it.
	}
	if fetch == nil {
		return nil, errors.New("no fetcher for /openapi.json")
	}
	doc, err := fetch(ctx)
	if err != nil {
		return nil, fmt.Errorf("fetch /openapi.json: %w", err)
	}
	if len(doc) > MaxDocumentBytes {
		return nil, fmt.Errorf("fetch /openapi.json: %d bytes, more than the %d allowed", len(doc), MaxDocumentBytes)
	}
	ix, err := Parse(doc)
	if err != nil {
		return nil, err
	}
	if ix.Version() == version && version != "development" {
		if err := writeAtomic(dir, file, doc); err != nil {
			return nil, err
		}
	}
	return ix, nil
}

// writeAtomic writes doc to a temporary file in dir, syncs it and renames it over file, so a
// crash leaves either the old cache or the new one, never half of one.
func writeAtomic(dir, file string, doc []byte) (err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cache openapi: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".romm-openapi-*.tmp")
	if err != nil {
		return fmt.Errorf("cache openapi: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(doc); err != nil {
		return fmt.Errorf("cache openapi: %w", err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("cache openapi: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("cache openapi: %w", err)
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("cache openapi: %w", err)
	}
	if err = os.Rename(tmp.Name(), file); err != nil {
		return fmt.Errorf("cache openapi: %w", err)
	}
	return nil
}

// validVersion keeps the version a single, ordinary file-name part: "5.3.1", "5.1.0-beta.3".
func validVersion(v string) bool {
	if v == "" || len(v) > 64 || v[0] == '.' || v[0] == '-' {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == '_') {
			return false
		}
	}
	return true
}
