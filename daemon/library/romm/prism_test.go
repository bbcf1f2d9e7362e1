package romm

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/prism"
)

// referenceDoc finds RomM's saved OpenAPI document in shared/reference beside the module root.
func referenceDoc(t *testing.T, name string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for ; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the test")
		}
	}
	p := filepath.Join(filepath.Dir(dir), "shared", "reference", name)
	_, err = os.Stat(p)
	peertest.RequirePeer(t, err)
	return p
}

// readEverything makes every call the tools make and fails on any error.
func readEverything(t *testing.T, c *Client) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Platforms(ctx); err != nil {
		t.Errorf("Platforms: %v", err)
	}
	page, err := c.SearchROMs(ctx, SearchQuery{Term: "a", Limit: 5, WithFiles: true})
	if err != nil {
		t.Errorf("SearchROMs: %v", err)
	}
	for _, r := range page.Items {
		if r.ID <= 0 {
			continue // a mock's id 0
		}
		if _, err := c.ROM(ctx, r.ID); err != nil {
			t.Errorf("ROM(%d): %v", r.ID, err)
		}
	}
	// The platform filter library_search sends (two ids: Prism 5.14.2
	// rejects a single value of a repeated parameter as "must be array",
	// which FastAPI accepts), and the collection filters of
	// romm_get_collection.
	for _, q := range []SearchQuery{
		{Term: "a", PlatformIDs: []int{1, 2}, Limit: 5, WithFiles: true},
		{CollectionID: 1, Limit: 5, WithFiles: true},
		{SmartCollectionID: 1, Limit: 5, WithFiles: true},
		{Offset: 5, Limit: 50},
	} {
		if _, err := c.SearchROMs(ctx, q); err != nil {
			t.Errorf("SearchROMs(%+v): %v", q, err)
		}
	}
	for _, kind := range []string{KindRegular, KindSmart, KindVirtual} {
		if _, err := c.Collections(ctx, kind); err != nil {
			t.Errorf("Collections(%s): %v", kind, err)
		}
	}
	for scope, err := range c.ProbeScopes(ctx) {
		if err != nil {
			t.Errorf("probe %s: %v", scope, err)
		}
	}
}

// TestPrismProxy puts Stoplight Prism's validating proxy between the client and the shared fake:
// every request the client sends and every answer it reads is held to RomM's own document.
func TestPrismProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prism (node): not in -short")
	}
	for _, tt := range []struct{ version, doc string }{
		{fakeromm.Version531, "romm-openapi-5.3.1.json"},
		{fakeromm.Version510, "romm-openapi-5.1.0.json"},
	} {
		t.Run(tt.version, func(t *testing.T) {
			doc := prism.PatchedDoc(t, referenceDoc(t, tt.doc), tt.version)
			fake, err := fakeromm.New(fakeromm.Options{Version: tt.version})
			if err != nil {
				t.Fatal(err)
			}
			upstream := httptest.NewServer(fake)
			t.Cleanup(upstream.Close)
			base := prism.Proxy(t, doc, upstream.URL)
			c := newClient(t, base, func(c *Config) { c.Token = fake.Token(); c.Timeout = 20 * time.Second })
			readEverything(t, c)
		})
	}
}

// TestPrismMock reads Prism's schema-shaped answers ("string", 0, one-item arrays): the client
// decodes them without panicking or erroring.
func TestPrismMock(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prism (node): not in -short")
	}
	doc := prism.PatchedDoc(t, referenceDoc(t, "romm-openapi-5.3.1.json"), "5.3.1")
	base := prism.Mock(t, doc)
	c := newClient(t, base, func(c *Config) { c.Timeout = 20 * time.Second })
	readEverything(t, c)
	_, err := c.ROM(context.Background(), 1)
	if err != nil && !errors.Is(err, ErrNotFound) {
		t.Errorf("ROM(1) from the mock: %v", err)
	}
}
