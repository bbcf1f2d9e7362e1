package openapi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fetcher counts its calls and returns doc (or err).
type fetcher struct {
	doc   []byte
	err   error
	calls atomic.Int32
}

func (f *fetcher) fetch(context.Context) ([]byte, error) {
	f.calls.Add(1)
	return f.doc, f.err
}

func docVersion(version string) []byte {
	return []byte(`{"openapi":"3.1.0","info":{"version":"` + version + `"},"paths":{"/api/heartbeat":{"get":{"operationId":"heartbeat_api_heartbeat_get","responses":{"200":{"content":{"application/json":{"schema":{"type":"object"}}}}}}}}}`)
}

func TestLoadCached(t *testing.T) {
	good := docVersion("5.3.1")
	tests := []struct {
		name       string
		cached     []byte // nil: no file
		fetch      []byte
		version    string
		wantCalls  int32
		wantFile   []byte // nil: no file afterwards
		wantErrSub string
	}{
		{"cold cache fetches and writes", nil, good, "5.3.1", 1, good, ""},
		{"warm cache does not fetch", good, nil, "5.3.1", 0, good, ""},
		{"corrupt cache refetched", []byte(`{"openapi":"3.1`), good, "5.3.1", 1, good, ""},
		{"cache of another version refetched", docVersion("5.2.0"), good, "5.3.1", 1, good, ""},
		{"fetched document of another version not cached", nil, docVersion("5.4.0"), "5.3.1", 1, nil, ""},
		{"development not cached", nil, docVersion("development"), "development", 1, nil, ""},
		{"fetched garbage refused", nil, []byte("<html>"), "5.3.1", 1, nil, "not JSON"},
		{"fetched too large", nil, make([]byte, MaxDocumentBytes+1), "5.3.1", 1, nil, "more than the"},
		{"unsafe version", nil, good, "../../etc/x", 0, nil, "not usable in a file name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "romm-openapi-"+tt.version+".json")
			if tt.cached != nil {
				if err := os.WriteFile(file, tt.cached, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f := &fetcher{doc: tt.fetch}
			ix, err := LoadCached(dir, tt.version, f.fetch)(t.Context())
			if tt.wantErrSub != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrSub) {
					t.Fatalf("err = %v, want %q", err, tt.wantErrSub)
				}
			} else if err != nil || ix.Len() != 1 {
				t.Fatalf("load: %v", err)
			}
			if got := f.calls.Load(); got != tt.wantCalls {
				t.Errorf("fetch called %d times, want %d", got, tt.wantCalls)
			}
			got, err := os.ReadFile(file)
			if tt.wantFile == nil {
				if !errors.Is(err, os.ErrNotExist) {
					t.Errorf("cache file exists (%d bytes), want none", len(got))
				}
			} else if string(got) != string(tt.wantFile) {
				t.Errorf("cache file = %.60q, want %.60q", got, tt.wantFile)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.HasSuffix(e.Name(), ".tmp") {
					t.Errorf("temporary file %s left behind", e.Name())
				}
			}
		})
	}
}

func TestLoadCachedOnceAndRetry(t *testing.T) {
	f := &fetcher{err: errors.New("connection refused")}
	load := LoadCached(t.TempDir(), "5.3.1", f.fetch)
	if _, err := load(t.Context()); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v", err)
	}
	f.err, f.doc = nil, docVersion("5.3.1")
	var wg sync.WaitGroup
	results := make([]*Index, 8)
	for i := range results {
		wg.Go(func() {
			ix, err := load(t.Context())
			if err != nil {
				t.Error(err)
			}
			results[i] = ix
		})
	}
	wg.Wait()
	if got := f.calls.Load(); got != 2 {
		t.Fatalf("fetch called %d times, want 2 (one failure, then one load shared by all)", got)
	}
	for _, ix := range results {
		if ix != results[0] || ix == nil {
			t.Fatal("callers got different indexes")
		}
	}
}

// TestLoadCachedWaitHonoursContext: a caller waiting behind a slow load gives up with its own
// context instead of hanging.
func TestLoadCachedWaitHonoursContext(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{})
	slow := func(context.Context) ([]byte, error) {
		close(started)
		<-release
		return docVersion("5.3.1"), nil
	}
	load := LoadCached(t.TempDir(), "5.3.1", slow)
	done := make(chan error)
	go func() { _, err := load(t.Context()); done <- err }()
	<-started
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := load(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting caller: err = %v, want context.Canceled", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
