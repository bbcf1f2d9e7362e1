package romm

import (
	"bytes"
	"context"
	cmd5 "crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
)

// syncT0 is where the save-sync tests' clocks start.
var syncT0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func md5Of(b []byte) string {
	s := cmd5.Sum(b)
	return hex.EncodeToString(s[:])
}

// syncRig is the shared fake on a fake clock, a client whose token holds WriteScopes, the
// cabinet's device and a handheld's, and every negotiate body the client sent.
type syncRig struct {
	fake       *fakeromm.Server
	c          *Client
	clk        *clock.Fake
	url        string
	cab, hand  string
	mu         sync.Mutex
	negotiated []map[string]any
}

func newSyncRig(t *testing.T, version string) *syncRig {
	t.Helper()
	fake, err := fakeromm.New(fakeromm.Options{Version: version, Scopes: fakeromm.WriteScopes()})
	if err != nil {
		t.Fatal(err)
	}
	r := &syncRig{fake: fake, clk: clock.NewFake(syncT0)}
	fake.SetClock(r.clk.Now)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/api/sync/negotiate" {
			b, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
			var m map[string]any
			json.Unmarshal(b, &m)
			r.mu.Lock()
			r.negotiated = append(r.negotiated, m)
			r.mu.Unlock()
			req.Body = io.NopCloser(bytes.NewReader(b))
		}
		fake.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	r.c = newClient(t, srv.URL, func(c *Config) { c.Token = fake.Token() })
	r.cab = fake.AddDevice(fakeromm.Device{Name: "Cabinet", SyncEnabled: true})
	r.hand = fake.AddDevice(fakeromm.Device{Name: "Handheld", SyncEnabled: true})
	return r
}

// add puts a save in place as the handheld's upload at.
func (r *syncRig) add(t *testing.T, rom int, slot, content string, at time.Time) int {
	t.Helper()
	id, err := r.fake.AddSave(fakeromm.SaveSpec{ROMID: rom, Slot: slot, FileName: "game.srm", Emulator: "snes9x",
		Content: []byte(content), DeviceID: r.hand, UpdatedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// withToken is a client of the rig with another token of the fake's.
func (r *syncRig) withToken(t *testing.T, scopes []string) *Client {
	t.Helper()
	return newClient(t, r.url, func(c *Config) { c.Token = r.fake.IssueToken(scopes, "") })
}

func local(rom int, slot, content string, at time.Time) ClientSave {
	return ClientSave{ROMID: rom, FileName: "Game.srm", Slot: slot, Emulator: "snes9x", ContentHash: md5Of([]byte(content)),
		UpdatedAt: at, Size: int64(len(content))}
}

func TestNegotiateSyncRules(t *testing.T) {
	const rom = fakeromm.ROMAlphaQuest
	before, after := syncT0.Add(-2*time.Hour), syncT0.Add(-time.Hour)
	tests := []struct {
		name   string
		server func(t *testing.T, r *syncRig)
		client []ClientSave
		want   []string // "action: reason"
	}{
		{"first sync", nil, []ClientSave{local(rom, "autosave", "mine", after)},
			[]string{"upload: Save exists on client but not on server"}},
		{"null slot", func(t *testing.T, r *syncRig) { r.add(t, rom, "autosave", "mine", before) },
			[]ClientSave{local(rom, "", "mine", after)},
			[]string{"upload: Save exists on client but not on server", "download: Save exists on server but not on client"}},
		{"identical", func(t *testing.T, r *syncRig) { r.add(t, rom, "autosave", "same", after) },
			[]ClientSave{local(rom, "autosave", "same", before)}, []string{"no_op: Content is identical"}},
		{"server newer", func(t *testing.T, r *syncRig) { r.add(t, rom, "autosave", "theirs", after) },
			[]ClientSave{local(rom, "autosave", "mine", before)}, []string{"download: Server save is newer (no sync history)"}},
		{"client newer", func(t *testing.T, r *syncRig) { r.add(t, rom, "autosave", "theirs", before) },
			[]ClientSave{local(rom, "autosave", "mine", after)}, []string{"upload: Client save is newer (no sync history)"}},
		{"same time, other bytes", func(t *testing.T, r *syncRig) { r.add(t, rom, "autosave", "theirs", after) },
			[]ClientSave{local(rom, "autosave", "mine", after)}, []string{"conflict: Same timestamp but different content"}},
		{"both changed", func(t *testing.T, r *syncRig) {
			id := r.add(t, rom, "autosave", "theirs", after)
			if err := r.fake.MarkSynced(r.cab, id, before); err != nil {
				t.Fatal(err)
			}
		}, []ClientSave{local(rom, "autosave", "mine", after)}, []string{"conflict: Both sides changed since last sync"}},
		{"changed here since the sync", func(t *testing.T, r *syncRig) {
			id := r.add(t, rom, "autosave", "theirs", before)
			if err := r.fake.MarkSynced(r.cab, id, before); err != nil {
				t.Fatal(err)
			}
		}, []ClientSave{local(rom, "autosave", "mine", after)}, []string{"upload: Client save is newer than last sync"}},
		{"unchanged since the sync", func(t *testing.T, r *syncRig) {
			id := r.add(t, rom, "autosave", "theirs", after)
			if err := r.fake.MarkSynced(r.cab, id, after); err != nil {
				t.Fatal(err)
			}
		}, []ClientSave{local(rom, "autosave", "mine", before)}, []string{"no_op: No changes since last sync"}},
		{"untracked", func(t *testing.T, r *syncRig) {
			id := r.add(t, rom, "autosave", "theirs", after)
			if err := r.fake.SetUntracked(r.cab, id, true); err != nil {
				t.Fatal(err)
			}
		}, []ClientSave{local(rom, "autosave", "mine", before)}, []string{"no_op: Save is untracked on this device"}},
		{"deleted here after a sync", func(t *testing.T, r *syncRig) {
			id := r.add(t, rom, "autosave", "theirs", after)
			if err := r.fake.MarkSynced(r.cab, id, after); err != nil {
				t.Fatal(err)
			}
		}, nil, nil},
		{"changed there, not here", func(t *testing.T, r *syncRig) {
			id := r.add(t, rom, "autosave", "theirs", after)
			if err := r.fake.MarkSynced(r.cab, id, before); err != nil {
				t.Fatal(err)
			}
		}, nil, []string{"download: Server save updated since last sync, not present on client"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newSyncRig(t, fakeromm.Version531)
			if tt.server != nil {
				tt.server(t, r)
			}
			n, err := r.c.NegotiateSync(context.Background(), r.cab, tt.client, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, op := range n.Ops {
				got = append(got, op.Action+": "+op.Reason)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			if n.SessionID <= 0 {
				t.Errorf("session %d", n.SessionID)
			}
		})
	}
}

func TestNegotiateSyncOps(t *testing.T) {
	r := newSyncRig(t, fakeromm.Version531)
	ctx := context.Background()
	at := syncT0.Add(-time.Hour)
	id := r.add(t, fakeromm.ROMCosmicCrusade, "autosave", "theirs", at)
	n, err := r.c.NegotiateSync(ctx, r.cab, []ClientSave{local(fakeromm.ROMAlphaQuest, "autosave", "mine", at)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []SyncOp{
		{Action: SyncUpload, ROMID: fakeromm.ROMAlphaQuest, FileName: "Game.srm", Slot: "autosave", Emulator: "snes9x",
			Reason: "Save exists on client but not on server"},
		{Action: SyncDownload, ROMID: fakeromm.ROMCosmicCrusade, SaveID: id, FileName: "game [2025-06-01_11-00-00].srm",
			Slot: "autosave", Emulator: "snes9x", Reason: "Save exists on server but not on client", ServerUpdatedAt: at,
			ServerHash: md5Of([]byte("theirs"))},
	}
	if len(n.Ops) != 2 || n.Ops[0] != want[0] || n.Ops[1] != want[1] {
		t.Errorf("ops\n got %+v\nwant %+v", n.Ops, want)
	}
	sent := r.negotiated[0]["saves"].([]any)[0].(map[string]any)
	if sent["updated_at"] != "2025-06-01T11:00:00Z" || sent["content_hash"] != md5Of([]byte("mine")) || sent["file_size_bytes"] != 4.0 {
		t.Errorf("sent %v", sent)
	}
	if _, has := r.negotiated[0]["rom_ids"]; has {
		t.Errorf("rom_ids sent without any: %v", r.negotiated[0])
	}
	// A second negotiation cancels the first session.
	n2, err := r.c.NegotiateSync(ctx, r.cab, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ss := r.fake.SyncSessions(); len(ss) != 2 || ss[0].Status != fakeromm.SyncCancelled || n2.SessionID != ss[1].ID {
		t.Errorf("sessions %+v", ss)
	}
	if err := r.c.CompleteSync(ctx, n.SessionID, 1, 0); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "CANCELLED") {
		t.Errorf("complete a cancelled session: %v", err)
	}
}

func TestNegotiateSyncROMIDs(t *testing.T) {
	for _, tt := range []struct {
		version string
		romIDs  []int
		sent    bool // rom_ids in the body
		roms    []int
	}{
		{fakeromm.Version531, []int{fakeromm.ROMCosmicCrusade}, true, []int{fakeromm.ROMAlphaQuest, fakeromm.ROMCosmicCrusade}},
		{fakeromm.Version531, []int{}, true, []int{fakeromm.ROMAlphaQuest}},
		{fakeromm.Version531, nil, false, []int{fakeromm.ROMAlphaQuest, fakeromm.ROMCosmicCrusade, fakeromm.ROMDeltaForce}},
		{fakeromm.Version510, []int{fakeromm.ROMCosmicCrusade}, false, []int{fakeromm.ROMAlphaQuest, fakeromm.ROMCosmicCrusade, fakeromm.ROMDeltaForce}},
		{fakeromm.VersionDevelopment, []int{fakeromm.ROMDeltaForce}, true, []int{fakeromm.ROMAlphaQuest, fakeromm.ROMDeltaForce}},
	} {
		r := newSyncRig(t, tt.version)
		at := syncT0.Add(-time.Hour)
		for _, rom := range []int{fakeromm.ROMAlphaQuest, fakeromm.ROMCosmicCrusade, fakeromm.ROMDeltaForce} {
			r.add(t, rom, "autosave", "theirs", at)
		}
		// The Alpha Quest save is sent, newer: an upload, and its ROM is in scope.
		n, err := r.c.NegotiateSync(context.Background(), r.cab, []ClientSave{local(fakeromm.ROMAlphaQuest, "autosave", "mine", syncT0)}, tt.romIDs)
		if err != nil {
			t.Fatal(err)
		}
		var roms []int
		for _, op := range n.Ops {
			roms = append(roms, op.ROMID)
		}
		_, sent := r.negotiated[0]["rom_ids"]
		if sent != tt.sent || !equalInts(roms, tt.roms) {
			t.Errorf("%s, rom_ids %v: sent %v, ops for %v; want %v, %v", tt.version, tt.romIDs, sent, roms, tt.sent, tt.roms)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestUploadSaveAgainstFakeRomM(t *testing.T) {
	r := newSyncRig(t, fakeromm.Version531)
	ctx := context.Background()
	const rom = fakeromm.ROMAlphaQuest
	r.add(t, rom, "autosave", "theirs", syncT0.Add(-time.Hour))
	n, err := r.c.NegotiateSync(ctx, r.cab, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := SaveUpload{ROMID: rom, Emulator: "fceumm", Slot: "autosave", DeviceID: r.cab, SessionID: n.SessionID,
		FileName: "Alpha Quest.srm", Content: []byte("mine")}
	_, err = r.c.UploadSave(ctx, u)
	if !errors.Is(err, ErrSaveConflict) || !strings.Contains(err.Error(), "Slot has a newer save since your last sync") {
		t.Fatalf("upload over the handheld's save: %v", err)
	}
	u.Overwrite = true
	s, err := r.c.UploadSave(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	want := Save{ID: 2, ROMID: rom, FileName: "Alpha Quest [2025-06-01_12-00-00].srm", Slot: "autosave", Emulator: "fceumm",
		ContentHash: md5Of([]byte("mine")), OriginDevice: r.cab, Size: 4, UpdatedAt: syncT0}
	if s != want {
		t.Errorf("uploaded\n got %+v\nwant %+v", s, want)
	}
	if at, _, ok := r.fake.LastSynced(r.cab, s.ID); !ok || !at.Equal(syncT0) {
		t.Errorf("cabinet synced %v %v", at, ok)
	}
	// The same bytes again: RomM's save comes back, nothing new.
	r.clk.Advance(time.Minute)
	u.Overwrite = false
	again, err := r.c.UploadSave(ctx, u)
	if err != nil || again != want || len(r.fake.Saves(rom)) != 2 {
		t.Errorf("identical upload: %+v, %v; %d rows", again, err, len(r.fake.Saves(rom)))
	}
	if got := r.fake.SyncSessions()[0].Completed; got != 1 {
		t.Errorf("session counted %d uploads, want 1 (the identical one is not counted)", got)
	}
	// No device: no 409 and no bookkeeping.
	plain, err := r.c.UploadSave(ctx, SaveUpload{ROMID: rom, FileName: "manual.srm", Content: []byte("x")})
	if err != nil || plain.Slot != "" || plain.FileName != "manual.srm" || plain.OriginDevice != "" {
		t.Errorf("plain upload %+v, %v", plain, err)
	}
	saves, err := r.c.Saves(ctx, rom, "autosave")
	if err != nil || len(saves) != 2 || saves[1] != want {
		t.Errorf("Saves(autosave) = %+v, %v", saves, err)
	}
	if all, err := r.c.Saves(ctx, rom, ""); err != nil || len(all) != 3 {
		t.Errorf("Saves() = %d, %v", len(all), err)
	}
	_, err = r.c.UploadSave(ctx, SaveUpload{ROMID: 9999, FileName: "x.srm", Content: []byte("x")})
	mustErr(t, err, ErrNotFound)
	_, err = r.c.UploadSave(ctx, SaveUpload{ROMID: rom, DeviceID: "no-such-device", FileName: "x.srm", Content: []byte("x")})
	mustErr(t, err, ErrDeviceUnknown)
}

// countingWriter counts what it was given.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

func TestDownloadSaveAgainstFakeRomM(t *testing.T) {
	r := newSyncRig(t, fakeromm.Version531)
	ctx := context.Background()
	content := bytes.Repeat([]byte("sram"), 2048)
	id := r.add(t, fakeromm.ROMCosmicCrusade, "autosave", string(content), syncT0.Add(-time.Hour))
	n, err := r.c.NegotiateSync(ctx, r.cab, nil, nil)
	if err != nil || len(n.Ops) != 1 || n.Ops[0].SaveID != id {
		t.Fatalf("negotiate: %+v, %v", n, err)
	}
	var got bytes.Buffer
	written, err := r.c.DownloadSave(ctx, id, r.cab, n.SessionID, &got, 0)
	if err != nil || written != int64(len(content)) || !bytes.Equal(got.Bytes(), content) {
		t.Fatalf("DownloadSave = %d, %v", written, err)
	}
	// The hash is the caller's to check.
	if md5Of(got.Bytes()) != n.Ops[0].ServerHash {
		t.Errorf("downloaded md5 %s, RomM lists %s", md5Of(got.Bytes()), n.Ops[0].ServerHash)
	}
	if _, _, ok := r.fake.LastSynced(r.cab, id); ok {
		t.Error("the download marked the save synced before the confirmation")
	}
	if err := r.c.ConfirmSaveDownloaded(ctx, id, r.cab); err != nil {
		t.Fatal(err)
	}
	if at, _, ok := r.fake.LastSynced(r.cab, id); !ok || !at.Equal(syncT0.Add(-time.Hour)) {
		t.Errorf("confirmed: %v %v", at, ok)
	}
	if err := r.c.CompleteSync(ctx, n.SessionID, 1, 0); err != nil {
		t.Fatal(err)
	}
	if ss := r.fake.SyncSessions(); ss[0].Status != fakeromm.SyncCompleted || ss[0].Completed != 1 {
		t.Errorf("session %+v", ss[0])
	}
	mustErr(t, r.c.CompleteSync(ctx, n.SessionID, 1, 0), ErrInvalid)
	mustErr(t, r.c.CompleteSync(ctx, 999, 1, 0), ErrNotFound)
	mustErr(t, r.c.ConfirmSaveDownloaded(ctx, 999, r.cab), ErrNotFound)
	mustErr(t, r.c.ConfirmSaveDownloaded(ctx, id, "no-such-device"), ErrDeviceUnknown)
	_, err = r.c.DownloadSave(ctx, 999, "", 0, &got, 0)
	mustErr(t, err, ErrNotFound)

	// Next time nothing is to do.
	n, err = r.c.NegotiateSync(ctx, r.cab, nil, nil)
	if err != nil || len(n.Ops) != 0 {
		t.Errorf("after the sync: %+v, %v", n.Ops, err)
	}

	// Bounds: a "2 GiB" save and one over a small max are refused before a byte is written.
	big, err := r.fake.AddSave(fakeromm.SaveSpec{ROMID: fakeromm.ROMDeltaForce, Slot: "autosave", FileName: "big.srm", Generated: 2 << 30})
	if err != nil {
		t.Fatal(err)
	}
	var cw countingWriter
	began := time.Now()
	if _, err := r.c.DownloadSave(ctx, big, "", 0, &cw, 0); !errors.Is(err, ErrTooLarge) || cw.n != 0 {
		t.Errorf("2 GiB save: %v, %d bytes written", err, cw.n)
	}
	if _, err := r.c.DownloadSave(ctx, id, "", 0, &cw, 100); !errors.Is(err, ErrTooLarge) || cw.n != 0 {
		t.Errorf("over max: %v, %d bytes written", err, cw.n)
	}
	t.Logf("refusals took %s", time.Since(began).Round(time.Millisecond))

	// A cut body is an error, not a short save.
	r.fake.SetFaults(fakeromm.Faults{Path: "/api/saves/", CutAfter: 100})
	got.Reset()
	written, err = r.c.DownloadSave(ctx, id, "", 0, &got, 0)
	if err == nil || errors.Is(err, ErrTooLarge) || written != 100 {
		t.Errorf("cut: %d, %v", written, err)
	}
	// A slow answer ends with the caller's context.
	r.fake.SetFaults(fakeromm.Faults{Path: "/api/saves/", Latency: time.Minute})
	sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := r.c.DownloadSave(sctx, id, "", 0, &got, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow: %v", err)
	}
	r.fake.SetFaults(fakeromm.Faults{})
	for _, s := range errorChain(err) {
		if strings.Contains(s, r.fake.Token()) {
			t.Errorf("error carries the token: %s", s)
		}
	}
}

// stallingSave answers a save download with part of a body, then nothing until the client goes.
func stallingSave(t *testing.T, length string, head []byte) *Client {
	t.Helper()
	f, srv := newFake(t, "5.3.1")
	f.route("/api/saves/1/content", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if length != "" {
			w.Header().Set("Content-Length", length)
		}
		w.WriteHeader(200)
		w.Write(head)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	return newClient(t, srv.URL)
}

func TestDownloadSaveStalls(t *testing.T) {
	ctx := context.Background()
	// The caller's deadline.
	c := stallingSave(t, "100", []byte("abc"))
	dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	var buf bytes.Buffer
	n, err := c.DownloadSave(dctx, 1, "", 0, &buf, 0)
	if !errors.Is(err, context.DeadlineExceeded) || n != 3 || !strings.Contains(err.Error(), "stopped at byte 3") {
		t.Errorf("deadline: %d, %v", n, err)
	}
	// The idle timeout: three times the client's timeout without a byte.
	c = withShortTimeout(t, stallingSave(t, "", []byte("abc")), 50*time.Millisecond)
	buf.Reset()
	n, err = c.DownloadSave(ctx, 1, "", 0, &buf, 0)
	if !errors.Is(err, context.DeadlineExceeded) || n != 3 || !strings.Contains(err.Error(), "sent nothing for 150ms") {
		t.Errorf("idle: %d, %v", n, err)
	}
}

func TestDownloadSaveRunsPastMax(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	f.route("/api/saves/1/content", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		for i := 0; i < 100 && r.Context().Err() == nil; i++ { // chunked: no length to refuse up front
			w.Write(bytes.Repeat([]byte{1}, 1000))
			w.(http.Flusher).Flush()
		}
	})
	var cw countingWriter
	n, err := newClient(t, srv.URL).DownloadSave(context.Background(), 1, "", 0, &cw, 2500)
	if !errors.Is(err, ErrTooLarge) || n != 2500 || cw.n != 2500 {
		t.Errorf("%d (%d written), %v", n, cw.n, err)
	}
	// Web pages are not saves.
	f.route("/api/saves/2/content", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("<!DOCTYPE html><html>sign in</html>"))
	})
	cw.n = 0
	if _, err := newClient(t, srv.URL).DownloadSave(context.Background(), 2, "", 0, &cw, 0); !errors.Is(err, ErrNotRomM) || cw.n != 0 {
		t.Errorf("web page: %v, %d written", err, cw.n)
	}
}

func TestSaveSyncScopes(t *testing.T) {
	ctx := context.Background()
	r := newSyncRig(t, fakeromm.Version531)
	id := r.add(t, fakeromm.ROMAlphaQuest, "autosave", "x", syncT0.Add(-time.Hour))
	all := fakeromm.WriteScopes()
	without := func(drop string) []string {
		var out []string
		for _, s := range all {
			if s != drop {
				out = append(out, s)
			}
		}
		return out
	}
	up := SaveUpload{ROMID: fakeromm.ROMAlphaQuest, Slot: "autosave", DeviceID: r.cab, Overwrite: true, FileName: "a.srm", Content: []byte("y")}
	var buf bytes.Buffer
	calls := map[string]func(c *Client) error{
		"negotiate": func(c *Client) error { _, err := c.NegotiateSync(ctx, r.cab, nil, nil); return err },
		"upload":    func(c *Client) error { _, err := c.UploadSave(ctx, up); return err },
		"download":  func(c *Client) error { _, err := c.DownloadSave(ctx, id, r.cab, 0, &buf, 0); return err },
		"confirm":   func(c *Client) error { return c.ConfirmSaveDownloaded(ctx, id, r.cab) },
		"complete":  func(c *Client) error { return c.CompleteSync(ctx, 1, 0, 0) },
		"list":      func(c *Client) error { _, err := c.Saves(ctx, fakeromm.ROMAlphaQuest, ""); return err },
	}
	for _, tt := range []struct{ call, drop string }{
		{"negotiate", "assets.read"}, {"negotiate", "devices.read"},
		{"upload", "assets.write"}, {"upload", "devices.write"},
		{"download", "assets.read"}, {"download", "devices.read"},
		{"confirm", "devices.write"}, {"complete", "devices.write"}, {"list", "assets.read"},
	} {
		c := r.withToken(t, without(tt.drop))
		err := calls[tt.call](c)
		var se *ScopeError
		if !errors.As(err, &se) || se.Scope != tt.drop || !strings.Contains(err.Error(), tt.drop) {
			t.Errorf("%s without %s: %v", tt.call, tt.drop, err)
		}
		for _, s := range errorChain(err) {
			if strings.Contains(s, "rmm_") {
				t.Errorf("%s: error carries a token: %s", tt.call, s)
			}
		}
	}

	// RomM 5.1 answers 403 for a bad token too: the error names both scopes.
	r51 := newSyncRig(t, fakeromm.Version510)
	_, err := r51.withToken(t, without("devices.read")).NegotiateSync(ctx, r51.cab, nil, nil)
	var ae *AuthError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "assets.read and devices.read") {
		t.Errorf("5.1 without devices.read: %v", err)
	}
}

func TestSaveSyncRefusals(t *testing.T) {
	ctx := context.Background()
	r48 := newSyncRig(t, fakeromm.Version480)
	_, err := r48.c.NegotiateSync(ctx, r48.cab, nil, nil)
	mustErr(t, err, ErrUnsupported)
	_, err = r48.c.UploadSave(ctx, SaveUpload{ROMID: 1, FileName: "a.srm"})
	mustErr(t, err, ErrUnsupported)

	r := newSyncRig(t, fakeromm.Version531)
	off := r.fake.AddDevice(fakeromm.Device{Name: "Sync off"})
	_, err = r.c.NegotiateSync(ctx, off, nil, nil)
	mustErr(t, err, ErrSyncDisabled)
	_, err = r.c.NegotiateSync(ctx, "no-such-device", nil, nil)
	mustErr(t, err, ErrDeviceUnknown)
	_, err = r.c.NegotiateSync(ctx, "", nil, nil) // the configured token is bound to no device
	mustErr(t, err, ErrInvalid)

	// Invalid requests go nowhere.
	r.fake.ResetRequests()
	ok := local(1, "autosave", "x", syncT0)
	bad := func(mod func(*ClientSave)) []ClientSave { s := ok; mod(&s); return []ClientSave{s} }
	var buf bytes.Buffer
	for name, call := range map[string]func() error{
		"rom id": func() error {
			_, err := r.c.NegotiateSync(ctx, r.cab, bad(func(s *ClientSave) { s.ROMID = 0 }), nil)
			return err
		},
		"no time": func() error {
			_, err := r.c.NegotiateSync(ctx, r.cab, bad(func(s *ClientSave) { s.UpdatedAt = time.Time{} }), nil)
			return err
		},
		"hash": func() error {
			_, err := r.c.NegotiateSync(ctx, r.cab, bad(func(s *ClientSave) { s.ContentHash = "abc" }), nil)
			return err
		},
		"path": func() error {
			_, err := r.c.NegotiateSync(ctx, r.cab, bad(func(s *ClientSave) { s.FileName = "../x.srm" }), nil)
			return err
		},
		"long slot": func() error {
			_, err := r.c.NegotiateSync(ctx, r.cab, bad(func(s *ClientSave) { s.Slot = strings.Repeat("s", 256) }), nil)
			return err
		},
		"rom ids":      func() error { _, err := r.c.NegotiateSync(ctx, r.cab, nil, make([]int, MaxSyncROMIDs+1)); return err },
		"device":       func() error { _, err := r.c.NegotiateSync(ctx, "bad device", nil, nil); return err },
		"upload name":  func() error { _, err := r.c.UploadSave(ctx, SaveUpload{ROMID: 1, FileName: "a\r\nb.srm"}); return err },
		"upload quote": func() error { _, err := r.c.UploadSave(ctx, SaveUpload{ROMID: 1, FileName: `a".srm`}); return err },
		"emulator": func() error {
			_, err := r.c.UploadSave(ctx, SaveUpload{ROMID: 1, FileName: "a.srm", Emulator: strings.Repeat("e", 51)})
			return err
		},
		"upload size": func() error {
			_, err := r.c.UploadSave(ctx, SaveUpload{ROMID: 1, FileName: "a.srm", Content: make([]byte, MaxSaveBytes+1)})
			return err
		},
		"save id":  func() error { _, err := r.c.DownloadSave(ctx, 0, "", 0, &buf, 0); return err },
		"no dst":   func() error { _, err := r.c.DownloadSave(ctx, 1, "", 0, nil, 0); return err },
		"session":  func() error { return r.c.CompleteSync(ctx, 0, 0, 0) },
		"counts":   func() error { return r.c.CompleteSync(ctx, 1, -1, 0) },
		"confirm":  func() error { return r.c.ConfirmSaveDownloaded(ctx, 1, "") },
		"list rom": func() error { _, err := r.c.Saves(ctx, 0, ""); return err },
	} {
		if err := call(); !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if reqs := r.fake.Requests(); len(reqs) != 0 {
		t.Errorf("invalid requests were sent: %+v", reqs)
	}
}

func TestHostileSaveNames(t *testing.T) {
	r := newSyncRig(t, fakeromm.Version531)
	ctx := context.Background()
	names := []string{"../x.srm", "a/b.srm", "x\x00.srm", strings.Repeat("n", 300)}
	for i, n := range names {
		if _, err := r.fake.AddSave(fakeromm.SaveSpec{ROMID: fakeromm.ROMAlphaQuest + i, Slot: "autosave", RawFileName: n,
			Content: []byte("real"), ContentHash: md5Of([]byte("a lie"))}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := r.c.NegotiateSync(ctx, r.cab, nil, nil)
	if err != nil || len(n.Ops) != len(names) {
		t.Fatalf("negotiate: %+v, %v", n, err)
	}
	for i, op := range n.Ops {
		if op.FileName != names[i] || op.ServerHash != md5Of([]byte("a lie")) {
			t.Errorf("op %d: %q %s (raw, for the caller to refuse)", i, op.FileName, op.ServerHash)
		}
	}
	// The bytes do not match the listed hash: the caller's check catches it.
	var buf bytes.Buffer
	if _, err := r.c.DownloadSave(ctx, n.Ops[0].SaveID, r.cab, n.SessionID, &buf, 0); err != nil || md5Of(buf.Bytes()) == n.Ops[0].ServerHash {
		t.Errorf("lying hash: %v", err)
	}
	// A name over 4 KiB fails the whole answer.
	if _, err := r.fake.AddSave(fakeromm.SaveSpec{ROMID: fakeromm.ROMFoxtrotTales, Slot: "autosave", RawFileName: strings.Repeat("n", maxRawName+1)}); err != nil {
		t.Fatal(err)
	}
	_, err = r.c.NegotiateSync(ctx, r.cab, nil, nil)
	mustErr(t, err, ErrBadData)
}
