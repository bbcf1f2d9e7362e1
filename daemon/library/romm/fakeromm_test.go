package romm

import (
	"context"
	"errors"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
)

// startFakeRomM runs simulator/fakeromm (the shared fake, shaped by RomM's 5.3.1 document) on
// loopback.
func startFakeRomM(t *testing.T, opts fakeromm.Options) (*fakeromm.Server, *Client) {
	t.Helper()
	fake, err := fakeromm.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	c, err := New(Config{URL: srv.URL, Token: fake.Token(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return fake, c
}

// TestAgainstFakeRomM reads everything the tools need from the shared fake at each version it
// plays and compares with the fake's own library.
func TestAgainstFakeRomM(t *testing.T) {
	for _, version := range []string{fakeromm.Version480, fakeromm.Version500, fakeromm.Version510,
		fakeromm.Version531, fakeromm.VersionDevelopment} {
		t.Run(version, func(t *testing.T) {
			fake, c := startFakeRomM(t, fakeromm.Options{Version: version})
			ctx := context.Background()

			v, err := c.Version(ctx)
			if err != nil || v.Raw != version {
				t.Fatalf("Version = %v, %v", v, err)
			}
			ps, err := c.Platforms(ctx)
			if err != nil || len(ps) != len(fake.Platforms()) {
				t.Fatalf("Platforms = %d, %v; fake has %d", len(ps), err, len(fake.Platforms()))
			}
			byID := map[int]Platform{}
			for _, p := range ps {
				byID[p.ID] = p
			}
			snes := 0
			for _, p := range fake.Platforms() {
				got := byID[p.ID]
				if got.Slug != p.Slug || got.FSSlug != p.FSSlug || got.Name != p.DisplayName() {
					t.Errorf("platform %d = %+v, fake %+v", p.ID, got, p)
				}
				if p.FSSlug == "snes" {
					snes = p.ID
				}
			}

			page, err := c.SearchROMs(ctx, SearchQuery{Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			wantTotal := len(fake.ROMs())
			if len(page.Items) != 3 || page.Total != wantTotal {
				t.Errorf("first page: %d items, total %d; want 3 of %d", len(page.Items), page.Total, wantTotal)
			}
			// Page through everything: every id once.
			seen := map[int]bool{}
			for off := 0; ; off += 4 {
				p, err := c.SearchROMs(ctx, SearchQuery{Limit: 4, Offset: off})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range p.Items {
					if seen[r.ID] {
						t.Errorf("ROM %d twice", r.ID)
					}
					seen[r.ID] = true
				}
				if len(p.Items) < 4 {
					break
				}
			}
			if len(seen) != wantTotal {
				t.Errorf("paging saw %d ROMs, want %d", len(seen), wantTotal)
			}

			hits, err := c.SearchROMs(ctx, SearchQuery{Term: "Cosmic", PlatformIDs: []int{snes}})
			if err != nil || len(hits.Items) == 0 || !strings.Contains(hits.Items[0].Name, "Cosmic") {
				t.Errorf("search Cosmic = %+v, %v", hits.Items, err)
			}

			for _, want := range fake.ROMs() {
				got, err := c.ROM(ctx, want.ID)
				if err != nil {
					t.Fatalf("ROM(%d): %v", want.ID, err)
				}
				if got.Name != want.Name || got.FSName != want.FSName || len(got.Files) != len(want.Files) {
					t.Errorf("ROM(%d) = %q %q %d files; fake %q %q %d", want.ID, got.Name, got.FSName, len(got.Files), want.Name, want.FSName, len(want.Files))
					continue
				}
				if got.CRC != want.CRC || got.SHA1 != want.SHA1 || got.MD5 != want.MD5 {
					t.Errorf("ROM(%d) hashes %s/%s/%s, fake %s/%s/%s", want.ID, got.CRC, got.MD5, got.SHA1, want.CRC, want.MD5, want.SHA1)
				}
				for i, f := range want.Files {
					g := got.Files[i]
					if g.ID != f.ID || g.Name != f.FileName || g.SizeBytes != int64(len(f.Bytes)) || g.CRC != f.CRC || g.SHA1 != f.SHA1 {
						t.Errorf("ROM(%d) file %d = %+v, fake id %d %q %d bytes crc %s", want.ID, i, g, f.ID, f.FileName, len(f.Bytes), f.CRC)
					}
					if len(g.ArchiveMembers) != len(f.ArchiveMembers) {
						t.Errorf("ROM(%d) file %d: %d archive members, fake %d", want.ID, i, len(g.ArchiveMembers), len(f.ArchiveMembers))
					}
				}
			}
			_, err = c.ROM(ctx, 99999)
			mustErr(t, err, ErrNotFound)

			for _, kind := range []string{KindRegular, KindSmart, KindVirtual, "virtual:genre"} {
				cs, err := c.Collections(ctx, kind)
				if err != nil {
					t.Errorf("Collections(%s): %v", kind, err)
					continue
				}
				for _, col := range cs {
					if col.ID == "" || col.Name == "" {
						t.Errorf("Collections(%s) item %+v", kind, col)
						continue
					}
					q := SearchQuery{Limit: MaxLimit}
					switch col.Kind {
					case KindRegular:
						q.CollectionID, _ = strconv.Atoi(col.ID)
					case KindSmart:
						q.SmartCollectionID, _ = strconv.Atoi(col.ID)
					case KindVirtual:
						q.VirtualCollectionID = col.ID
					}
					p, err := c.SearchROMs(ctx, q)
					if err != nil || (p.Total >= 0 && p.Total != col.ROMCount) {
						t.Errorf("ROMs of %s collection %q: total %d, %v; rom_count %d", kind, col.Name, p.Total, err, col.ROMCount)
					}
					one, err := c.Collection(ctx, col.Kind, col.ID)
					if err != nil || one != col {
						t.Errorf("Collection(%s, %s) = %+v, %v; want %+v", col.Kind, col.ID, one, err, col)
					}
				}
			}

			for scope, err := range c.ProbeScopes(ctx) {
				if err != nil {
					t.Errorf("probe %s: %v", scope, err)
				}
			}
			if doc, err := c.OpenAPI(ctx); err != nil || len(doc) == 0 {
				t.Errorf("OpenAPI: %v", err)
			}
			status, body, err := c.Get(ctx, "/api/platforms", nil)
			if err != nil || status != 200 || len(body) == 0 {
				t.Errorf("Get /api/platforms = %d, %v", status, err)
			}
			for _, r := range fake.Requests() {
				if r.Method != "GET" {
					t.Errorf("the client sent %s %s", r.Method, r.Path)
				}
				if r.Path == "/api/roms" && v.AtLeast(5, 1) && r.Query.Get("with_rom_id_index") != "false" {
					t.Errorf("RomM %s: /api/roms without with_rom_id_index=false: %v", version, r.Query)
				}
			}
		})
	}
}

func TestFakeRomMScopesAndRevocation(t *testing.T) {
	for _, tt := range []struct {
		version string
		want    error
	}{{fakeromm.Version531, ErrMissingScope}, {fakeromm.Version510, ErrUnauthorized}} {
		t.Run(tt.version, func(t *testing.T) {
			_, c := startFakeRomM(t, fakeromm.Options{Version: tt.version, Scopes: []string{fakeromm.ScopePlatformsRead}})
			got := c.ProbeScopes(context.Background())
			if got["platforms.read"] != nil || !errors.Is(got["roms.read"], tt.want) || !errors.Is(got["collections.read"], tt.want) {
				t.Errorf("ProbeScopes = %v", got)
			}
		})
	}
	fake, c := startFakeRomM(t, fakeromm.Options{})
	fake.Revoke()
	_, err := c.Platforms(context.Background())
	mustErr(t, err, ErrUnauthorized)
}

func TestFakeRomMFaults(t *testing.T) {
	other := httptest.NewServer(nil)
	t.Cleanup(other.Close)
	tests := []struct {
		name   string
		faults fakeromm.Faults
		check  func(error) bool
	}{
		{"html portal", fakeromm.Faults{Path: "/api/platforms", HTML: true}, func(err error) bool { return errors.Is(err, ErrNotRomM) }},
		{"502", fakeromm.Faults{Path: "/api/platforms", Status: 502}, func(err error) bool { return err != nil }},
		{"500", fakeromm.Faults{Path: "/api/platforms", Status: 500}, func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "RomM failed")
		}},
		{"truncated", fakeromm.Faults{Path: "/api/platforms", Truncated: true}, func(err error) bool { return err != nil }},
		{"huge", fakeromm.Faults{Path: "/api/platforms", Huge: 17 << 20}, func(err error) bool { return errors.Is(err, ErrTooLarge) }},
		{"slow", fakeromm.Faults{Path: "/api/platforms", Latency: time.Minute}, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
		{"redirect", fakeromm.Faults{Path: "/api/platforms", RedirectTo: other.URL}, func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "another host")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, err := fakeromm.New(fakeromm.Options{})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(fake)
			t.Cleanup(srv.Close)
			c := newClient(t, srv.URL, func(c *Config) { c.Token = fake.Token() })
			if tt.faults.Latency > 0 {
				c = withShortTimeout(t, c, 200*time.Millisecond)
			}
			fake.SetFaults(tt.faults)
			_, err = c.Platforms(context.Background())
			if !tt.check(err) {
				t.Fatalf("Platforms under %s: %v", tt.name, err)
			}
			for _, s := range errorChain(err) {
				if strings.Contains(s, fake.Token()) {
					t.Fatalf("error carries the token: %s", s)
				}
			}
		})
	}
}
