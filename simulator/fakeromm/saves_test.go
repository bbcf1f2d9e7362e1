package fakeromm

import (
	"archive/zip"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// syncDevice adds a device with sync on, as registering one does.
func syncDevice(t *testing.T, s *Server, name string) string {
	t.Helper()
	return s.AddDevice(Device{Name: name, SyncEnabled: true})
}

func TestSaveRoutesByVersion(t *testing.T) {
	for _, tt := range []struct {
		version string
		want    int
	}{{Version480, 404}, {Version500, 200}, {Version510, 200}, {Version531, 200}, {VersionDevelopment, 200}} {
		s, base := newServer(t, Options{Version: tt.version, Scopes: WriteScopes()})
		if code, _, body := get(t, base, "/api/saves?rom_id=1", s.Token()); code != tt.want {
			t.Errorf("%s: GET /api/saves = %d, want %d: %s", tt.version, code, tt.want, body)
		}
		want := tt.want
		if want == 200 {
			want = 400 // no device
		}
		if code, _, body := send(t, "POST", base, "/api/sync/negotiate", s.Token(), map[string]any{"saves": []any{}}); code != want {
			t.Errorf("%s: negotiate = %d, want %d: %s", tt.version, code, want, body)
		}
	}
}

func TestUploadSave(t *testing.T) {
	s, base, clk := writeServer(t)
	tok := s.Token()
	cab, hand := syncDevice(t, s, "Cabinet"), syncDevice(t, s, "Handheld")
	q := func(extra string) string {
		return fmt.Sprintf("rom_id=%d&emulator=snes9x&slot=autosave%s", ROMAlphaQuest, extra)
	}
	up := func(query string, content string, want int) saveAnswer {
		t.Helper()
		code, body := uploadSave(t, base, tok, query, "Alpha Quest.srm", []byte(content))
		if code != want {
			t.Fatalf("upload %s: %d, want %d: %s", query, code, want, body)
		}
		var a saveAnswer
		if code == 200 {
			decode(t, body, &a)
		} else if want == 409 {
			if d := detail(t, body); d != "Slot has a newer save since your last sync" && d != "Save has been updated since your last sync" {
				t.Fatalf("409 detail %q", d)
			}
		}
		return a
	}

	// No device: a new tagged row, no syncs.
	a := up(q(""), "A", 200)
	if a.FileName != "Alpha Quest [2025-06-01_12-00-00].srm" || a.FileNameNoTags != "Alpha Quest" || a.FileExtension != "srm" ||
		a.FileNameNoExt != "Alpha Quest [2025-06-01_12-00-00]" || a.FilePath != "users/557365723a31/saves/nes/1/snes9x" ||
		a.FullPath != a.FilePath+"/"+a.FileName || a.DownloadPath != "/api/saves/1/content?timestamp=2025-06-01 12:00:00+00:00" ||
		*a.ContentHash != md5hex([]byte("A")) || a.FileSizeBytes != 1 || a.OriginDeviceID != nil || len(a.DeviceSyncs) != 0 {
		t.Errorf("first upload %+v", a)
	}
	// The cabinet never synced the slot's newest save: 409, unless it overwrites.
	clk.Advance(time.Second)
	up(q("&device_id="+cab), "B", 409)
	b := up(q("&device_id="+cab+"&overwrite=true"), "B", 200)
	if b.ID != 2 || b.FileName != "Alpha Quest [2025-06-01_12-00-01].srm" || *b.OriginDeviceID != cab ||
		len(b.DeviceSyncs) != 1 || b.DeviceSyncs[0].DeviceID != cab || !b.DeviceSyncs[0].IsCurrent {
		t.Errorf("overwrite %+v", b)
	}
	// Now it has: a plain upload goes through.
	clk.Advance(time.Second)
	c := up(q("&device_id="+cab), "C", 200)
	// Identical content: the slot's save comes back, nothing changes.
	clk.Advance(time.Second)
	same := up(q("&device_id="+cab), "C", 200)
	if same.ID != c.ID || len(s.Saves(ROMAlphaQuest)) != 3 {
		t.Errorf("identical upload: id %d (want %d), %d rows", same.ID, c.ID, len(s.Saves(ROMAlphaQuest)))
	}
	// The handheld never synced it: 409.
	up(q("&device_id="+hand), "D", 409)
	// Twice in the same second: one row, updated in place.
	e := up(q("&device_id="+cab), "E", 200)
	f := up(q("&device_id="+cab), "F", 200)
	if e.ID != f.ID || f.FileName != "Alpha Quest [2025-06-01_12-00-03].srm" || *f.ContentHash != md5hex([]byte("F")) {
		t.Errorf("same second: %+v then %+v", e, f)
	}
	at, _, ok := s.LastSynced(cab, f.ID)
	if !ok || at.Format(time.RFC3339) != "2025-06-01T12:00:03Z" {
		t.Errorf("cabinet synced %v %v", at, ok)
	}

	// Without a slot: the name is kept and the row updated in place; a
	// change by another device since the cabinet's sync is a 409.
	noSlot := fmt.Sprintf("rom_id=%d", ROMCosmicCrusade)
	code, body := uploadSave(t, base, tok, noSlot+"&device_id="+cab, "../Cosmic.srm", []byte("1"))
	var m saveAnswer
	decode(t, body, &m)
	if code != 200 || m.FileName != "Cosmic.srm" || m.Slot != nil || m.FilePath != "users/557365723a31/saves/snes/3" {
		t.Fatalf("no slot: %d %s", code, body)
	}
	clk.Advance(time.Second)
	if code, body := uploadSave(t, base, tok, noSlot+"&device_id="+hand, "Cosmic.srm", []byte("2")); code != 200 {
		t.Fatalf("handheld: %d %s", code, body)
	}
	if code, body := uploadSave(t, base, tok, noSlot+"&device_id="+cab, "Cosmic.srm", []byte("3")); code != 409 ||
		detail(t, body) != "Save has been updated since your last sync" {
		t.Errorf("stale cabinet: %d %s", code, body)
	}
	if n := len(s.Saves(ROMCosmicCrusade)); n != 1 {
		t.Errorf("%d rows without a slot, want 1", n)
	}

	// A zip is hashed by its members.
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for _, n := range []string{"b.bin", "a.bin"} {
		w, _ := zw.Create(n)
		w.Write([]byte(n))
	}
	zw.Close()
	code, body = uploadSave(t, base, tok, fmt.Sprintf("rom_id=%d&slot=psp", ROMEchoChamber), "ULUS.zip", zb.Bytes())
	decode(t, body, &m)
	want := md5hex([]byte("a.bin:" + md5hex([]byte("a.bin")) + "\nb.bin:" + md5hex([]byte("b.bin"))))
	if code != 200 || *m.ContentHash != want {
		t.Errorf("zip hash %v, want %s", m.ContentHash, want)
	}
}

func TestUploadSaveRefusals(t *testing.T) {
	s, base, _ := writeServer(t)
	cab := syncDevice(t, s, "Cabinet")
	readOnly := s.IssueToken([]string{ScopeAssetsWrite}, "")
	noWrite := s.IssueToken(ReadScopes(), "")
	q := fmt.Sprintf("rom_id=%d&slot=autosave", ROMAlphaQuest)
	ct, plain := multipartSave(t, "", true, []byte("x"))
	for _, tt := range []struct {
		name, token, query, file string
		want                     int
		detail                   string
	}{
		{"no filename", s.Token(), q, "", 400, "Save file has no filename"},
		{"only dots", s.Token(), q, "../..", 400, "Invalid save filename: Filename cannot be empty after sanitization"},
		{"unknown ROM", s.Token(), "rom_id=999", "x.srm", 404, "Rom with id '999' not found"},
		{"unknown device", s.Token(), q + "&device_id=nope", "x.srm", 404, "Device with ID nope not found"},
		{"device without devices.write", readOnly, q + "&device_id=" + cab, "x.srm", 403, "Forbidden"},
		{"no assets.write", noWrite, q, "x.srm", 403, "Forbidden"},
	} {
		code, body := uploadSave(t, base, tt.token, tt.query, tt.file, []byte("x"))
		if code != tt.want || detail(t, body) != tt.detail {
			t.Errorf("%s: %d %s, want %d %q", tt.name, code, body, tt.want, tt.detail)
		}
	}
	if code, body := postRaw(t, base+"/api/saves?"+q, s.Token(), ct, plain); code != 422 || !slices.Equal(locs(t, body), []string{"body.saveFile"}) {
		t.Errorf("a field, not a file: %d %s", code, body)
	}
	if code, body := postRaw(t, base+"/api/saves?slot="+strings.Repeat("s", 256), s.Token(), "application/json", []byte("{}")); code != 422 ||
		!slices.Equal(locs(t, body), []string{"query.rom_id", "query.slot", "body.saveFile"}) {
		t.Errorf("no rom_id, long slot, no file: %d %s", code, body)
	}
	if n := len(s.Saves(0)); n != 0 {
		t.Errorf("%d saves stored by refused uploads", n)
	}
	// Sanitizing: a path and the characters RomM drops or replaces.
	code, body := uploadSave(t, base, s.Token(), "rom_id=1", `dir/a:b|c*?"<>+.srm`, []byte("x"))
	var a saveAnswer
	decode(t, body, &a)
	if code != 200 || a.FileName != "a-b-c.srm" {
		t.Errorf("sanitized name %d %q", code, a.FileName)
	}
}

func TestCompareSaveState(t *testing.T) {
	t1 := t0.Add(time.Hour)
	t2 := t1.Add(time.Hour)
	at := func(tm time.Time) *time.Time { return &tm }
	for _, tt := range []struct {
		clientHash   string
		clientAt     time.Time
		serverHash   string
		serverAt     time.Time
		synced       *time.Time
		action, want string
	}{
		{"h", t0, "h", t2, at(t1), "no_op", "Content is identical"},
		{"a", t2, "b", t2, at(t1), "conflict", "Both sides changed since last sync"},
		{"a", t2, "b", t1, at(t1), "upload", "Client save is newer than last sync"},
		{"a", t1, "b", t2, at(t1), "download", "Server save is newer than last sync"},
		{"a", t0, "b", t1, at(t1), "no_op", "No changes since last sync"},
		{"a", t2, "b", t1, nil, "upload", "Client save is newer (no sync history)"},
		{"a", t1, "b", t2, nil, "download", "Server save is newer (no sync history)"},
		{"a", t1, "b", t1, nil, "conflict", "Same timestamp but different content"},
		{"", t1, "b", t1, nil, "conflict", "Same timestamp but different content"},
		{"", t1, "", t1, nil, "no_op", "Saves appear identical"},
	} {
		action, reason := compareSaveState(tt.clientHash, tt.clientAt, tt.serverHash, tt.serverAt, tt.synced)
		if action != tt.action || reason != tt.want {
			t.Errorf("%+v: %s %q, want %s %q", tt, action, reason, tt.action, tt.want)
		}
	}
}
