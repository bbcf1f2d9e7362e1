package romm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// seedFiles adds every testdata JSON file as a seed.
func seedFiles(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{"", "null", "[]", "{}", `{"items":null}`, `{"items":[{"id":-1}]}`, `[{"id":1e99}]`,
		`{"items":[{"id":1,"name":"\u202eX\u0000","files":[{"id":1,"archive_members":[{"name":"a","size":1}]}]}]}`,
		// Issue 24's shapes, at the decoders' own bounds (the client refuses them before decoding).
		`{"id":5,"files":[` + strings.Repeat(`{},`, maxFiles) + `{}]}`,
		`{"id":5,"files":[{"id":1,"archive_members":[` + strings.Repeat(`{},`, maxMembers) + `{}]}]}`,
		`{"items":[{"id":1,"files":[null,0,[],{}]}],"rom_id_index":[` + strings.Repeat(`1,`, 1000) + `1],"total":1}`,
		`[{"id":1,"rom_ids":[` + strings.Repeat(`1,`, 1000) + `1],"FILES":[{}]}]`,
		`{"id":5,"summary":` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `}`} {
		f.Add([]byte(s))
	}
}

// checkListBounds: what passes typedJSON never reaches the decoders' own list bounds, which they
// can only check after decoding every item.
func checkListBounds(t *testing.T, body []byte, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "more than") && bounded.CheckJSON(body, typedJSON) == nil {
		t.Fatalf("%v, for an answer that passes typedJSON", err)
	}
}

// checkLine fails when s is not what untrusted.Clean(s, max) would leave.
func checkLine(t *testing.T, field, s string, max int) {
	t.Helper()
	if untrusted.Clean(s, max) != s {
		t.Fatalf("%s %q is not clean (cap %d)", field, s, max)
	}
}

func checkHash(t *testing.T, field, h string, n int) {
	t.Helper()
	if h != "" && (len(h) != n || strings.ToLower(h) != h || hexHash(h, n) != h) {
		t.Fatalf("%s %q is not %d lowercase hex digits", field, h, n)
	}
}

func checkROM(t *testing.T, r ROM) {
	t.Helper()
	if r.ID < 0 || r.PlatformID < 0 || r.FSSizeBytes < 0 {
		t.Fatalf("negative number in %+v", r)
	}
	checkLine(t, "name", r.Name, capName)
	checkLine(t, "fs_name", r.FSName, capFileName)
	checkLine(t, "platform slug", r.PlatformSlug, capSlug)
	checkLine(t, "platform fs slug", r.PlatformFSSlug, capSlug)
	checkLine(t, "players", r.Players, capPlayers)
	checkLine(t, "developer", r.Developer, capName)
	if untrusted.CleanText(r.Summary, capSummary) != r.Summary {
		t.Fatalf("summary %q is not clean", r.Summary)
	}
	for _, list := range [][]string{r.Genres, r.Regions} {
		if len(list) > capListLen {
			t.Fatalf("list of %d items", len(list))
		}
		for _, s := range list {
			if s == "" {
				t.Fatalf("empty list item")
			}
			checkLine(t, "list item", s, capListItem)
		}
	}
	checkHash(t, "crc", r.CRC, 8)
	checkHash(t, "md5", r.MD5, 32)
	checkHash(t, "sha1", r.SHA1, 40)
	if r.Year != 0 && (r.Year < 1950 || r.Year > 2100) {
		t.Fatalf("year %d", r.Year)
	}
	for _, f := range r.Files {
		if f.ID < 0 || f.SizeBytes < 0 {
			t.Fatalf("negative number in file %+v", f)
		}
		checkLine(t, "file name", f.Name, capFileName)
		checkLine(t, "category", f.Category, capCategory)
		checkHash(t, "file crc", f.CRC, 8)
		checkHash(t, "file md5", f.MD5, 32)
		checkHash(t, "file sha1", f.SHA1, 40)
		for _, m := range f.ArchiveMembers {
			if m.SizeBytes < 0 {
				t.Fatalf("negative member size")
			}
			checkLine(t, "member name", m.Name, capFileName)
			checkHash(t, "member crc", m.CRC, 8)
			checkHash(t, "member md5", m.MD5, 32)
			checkHash(t, "member sha1", m.SHA1, 40)
		}
	}
}

// checkDecodeError: a decoder error is one of ours and says nothing unclean.
func checkDecodeError(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrBadData) && !errors.Is(err, ErrNotRomM) {
		t.Fatalf("decode error %v is not ErrBadData/ErrNotRomM", err)
	}
	if !utf8.ValidString(err.Error()) || untrusted.Clean(err.Error(), 0) != err.Error() {
		t.Fatalf("decode error text is not clean: %q", err.Error())
	}
}

func FuzzDecodeRoms(f *testing.F) {
	seedFiles(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := decodePage(body, 0, MaxLimit)
		if err != nil {
			checkDecodeError(t, err)
			checkListBounds(t, body, err)
			return
		}
		if len(p.Items) > MaxLimit || p.Total < -1 || p.Offset < 0 || p.Limit < 1 || p.Limit > MaxLimit {
			t.Fatalf("page %d items, total %d, offset %d, limit %d", len(p.Items), p.Total, p.Offset, p.Limit)
		}
		for _, r := range p.Items {
			checkROM(t, r)
		}
	})
}

func FuzzDecodeROM(f *testing.F) {
	seedFiles(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeROM(body)
		if err != nil {
			checkDecodeError(t, err)
			checkListBounds(t, body, err)
			return
		}
		checkROM(t, r)
	})
}

func FuzzDecodePlatforms(f *testing.F) {
	seedFiles(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		ps, err := decodePlatforms(body)
		if err != nil {
			checkDecodeError(t, err)
			return
		}
		if len(ps) > maxPlatforms {
			t.Fatalf("%d platforms", len(ps))
		}
		for _, p := range ps {
			if p.ID < 0 || p.ROMCount < 0 {
				t.Fatalf("negative number in %+v", p)
			}
			checkLine(t, "slug", p.Slug, capSlug)
			checkLine(t, "fs_slug", p.FSSlug, capSlug)
			checkLine(t, "name", p.Name, capName)
		}
	})
}

func FuzzDecodeCollections(f *testing.F) {
	seedFiles(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, kind := range []string{KindRegular, KindSmart, KindVirtual} {
			cs, err := decodeCollections(body, kind)
			if err != nil {
				checkDecodeError(t, err)
				continue
			}
			for _, c := range cs {
				if c.Kind != kind || c.ROMCount < 0 || (kind == KindVirtual && !virtualIDOK(c.ID)) {
					t.Fatalf("collection %+v", c)
				}
				checkLine(t, "name", c.Name, capName)
				if untrusted.CleanText(c.Description, capDescription) != c.Description {
					t.Fatalf("description %q is not clean", c.Description)
				}
			}
		}
	})
}

func FuzzDecodeHeartbeat(f *testing.F) {
	seedFiles(f)
	f.Add([]byte(`{"SYSTEM":{"VERSION":"5.3.1"}}`))
	f.Add([]byte(`{"SYSTEM":{"VERSION":5}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := decodeHeartbeat(body)
		if err != nil {
			checkDecodeError(t, err)
			return
		}
		checkLine(t, "raw version", v.Raw, 64)
	})
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"4.8.0", "5.0.0", "5.1.0-beta.3", "5.2.0", "5.3.1", "5.4.0", "development", "v5.2", "5.3.1+g1",
		"string", "", "5", "5..1", "5.3.1-", "99999999.0.0", "5.3.1-\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		if err != nil {
			if strings.Contains(err.Error(), "\u202e") || !utf8.ValidString(err.Error()) {
				t.Fatalf("error text %q carries unclean input", err)
			}
			return
		}
		checkLine(t, "raw", v.Raw, 64)
		if v.Development {
			if !v.AtLeast(99, 0) {
				t.Fatalf("development is not newest")
			}
			return
		}
		if v.Major < 0 || v.Minor < 0 || v.Patch < 0 || v.Major > 999999 {
			t.Fatalf("version numbers %+v", v)
		}
		if !v.AtLeast(v.Major, v.Minor) || v.AtLeast(v.Major, v.Minor+1) {
			t.Fatalf("AtLeast is inconsistent for %+v", v)
		}
		// What String prints parses back to the same numbers.
		again, err := ParseVersion(v.String())
		if err != nil || again.Major != v.Major || again.Minor != v.Minor || again.Patch != v.Patch || again.Pre != v.Pre {
			t.Fatalf("ParseVersion(%q) = %+v, %v; want %+v", v.String(), again, err, v)
		}
	})
}

func FuzzGenericPath(f *testing.F) {
	for _, s := range []string{"/api/roms", "/api/../x", "/api/%2e%2e/x", "/api/roms/%2F", "/api/a%00", "/api//x", "/api/roms/1/simple"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		r, err := genericRequest(path, nil)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		if !strings.HasPrefix(r.path, "/api/") {
			t.Fatalf("accepted %q → %q outside /api/", path, r.path)
		}
		for _, seg := range strings.Split(r.path, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("accepted %q with a dot segment", path)
			}
		}
		if strings.ContainsAny(r.path, "?#\\\x00") {
			t.Fatalf("accepted %q → %q", path, r.path)
		}
	})
}
