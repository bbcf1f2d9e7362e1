package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/library/savesync"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// fakeSaveSync is the daemon's save sync in memory (the sync itself is
// tested in package savesync against the fake RomM): it answers what it is
// given and records every call. Resolve settles a conflict listed in
// status.Waiting and answers ErrNoConflict for any other.
type fakeSaveSync struct {
	mu       sync.Mutex
	status   savesync.Status
	saves    savesync.Saves // Game is the game asked for, with romID
	romID    int            // RomM's id the daemon finds for a game (0: RomM does not have it)
	savesErr error
	result   savesync.Result
	syncErr  error
	steps    int // progress steps a Sync reports
	// afterStep, when set, is called after each progress step (the MCP
	// check waits there until the notification is on the wire).
	afterStep  func()
	resolved   savesync.Item
	resolveErr error
	calls      []string
}

func newFakeSaveSync() *fakeSaveSync {
	return &fakeSaveSync{status: savesync.Status{State: savesync.StateOK, Asked: true, On: true,
		BackupDir: "/userdata/saves/.cabinet-backup"}}
}

func (f *fakeSaveSync) call(s string) {
	f.calls = append(f.calls, s)
}

func (f *fakeSaveSync) Saves(_ context.Context, g savesync.Game) (savesync.Saves, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call(fmt.Sprintf("Saves %s %s %s", g.System, g.ROM, g.Name))
	if f.savesErr != nil {
		return savesync.Saves{}, f.savesErr
	}
	sv := f.saves
	sv.Game = g
	sv.Game.ROMID = f.romID
	return sv, nil
}

func (f *fakeSaveSync) Sync(_ context.Context, g savesync.Game, progress func(done, total int)) (savesync.Result, error) {
	f.mu.Lock()
	f.call(fmt.Sprintf("Sync %s %s", g.System, g.ROM))
	steps, res, err, after := f.steps, f.result, f.syncErr, f.afterStep
	f.mu.Unlock()
	if err != nil {
		return savesync.Result{}, err
	}
	for i := 1; i <= steps && progress != nil; i++ {
		progress(i, steps)
		if after != nil {
			after()
		}
	}
	return res, nil
}

func (f *fakeSaveSync) Resolve(_ context.Context, romID int, slot, keep string) (savesync.Item, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.call(fmt.Sprintf("Resolve %d %s %s", romID, slot, keep))
	if f.resolveErr != nil {
		return savesync.Item{}, f.resolveErr
	}
	for i, c := range f.status.Waiting {
		if c.Game.ROMID == romID && c.Slot == slot {
			f.status.Waiting = slices.Delete(f.status.Waiting, i, i+1)
			f.status.Conflicts = len(f.status.Waiting)
			return f.resolved, nil
		}
	}
	return savesync.Item{}, savesync.ErrNoConflict
}

func (f *fakeSaveSync) Status() savesync.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.status
	st.Waiting = slices.Clone(st.Waiting)
	return st
}

func (f *fakeSaveSync) set(mod func(f *fakeSaveSync)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	mod(f)
}

func (f *fakeSaveSync) takeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

func saveRig(t *testing.T, opts Options, f *fakeSaveSync) *rig {
	t.Helper()
	return newRig(t, rigConfig{opts: opts, deps: func(d *Deps) { d.SaveSync, d.SaveSyncWrites = f, true }})
}

var saveTools3 = []string{"library_saves", "library_sync_saves", "library_resolve_save"}

// Times of the fixture's saves.
var (
	saveT0 = time.Date(2025, 4, 30, 18, 0, 0, 0, time.UTC)
	saveT1 = time.Date(2025, 5, 1, 9, 30, 0, 0, time.UTC)
)

const zeldaROMID = 17

// zeldaConflict is a conflict of the fixture's Zelda battery save.
func zeldaConflict(path string) savesync.Conflict {
	return savesync.Conflict{Game: savesync.Game{System: "nes", ROM: path, ROMID: zeldaROMID, Name: "The Legend of Zelda"},
		Slot: "autosave", Local: "/userdata/saves/nes/The Legend of Zelda (USA).srm", LocalHash: strings.Repeat("a", 32),
		LocalAt: saveT1, SaveID: 5, RomMFile: "zelda.srm", RomMHash: strings.Repeat("b", 32), RomMAt: saveT0,
		RomMFrom: "handheld", Copy: "/userdata/saves/.cabinet-backup/nes/The Legend of Zelda (USA).srm.romm-2025-05-01T09-30-00.000Z",
		Reason: "changed on both sides since the last sync", Found: saveT1}
}

func TestSaveToolsRegistration(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   Options
		f      *fakeSaveSync
		writes bool
		want   []string
	}{
		{"without SaveSync", Options{}, nil, true, nil},
		{"with SaveSync", Options{}, newFakeSaveSync(), true, saveTools3},
		{"sync not asked for", Options{}, newFakeSaveSync(), false, []string{"library_saves"}},
		{"read-only", Options{ReadOnly: true}, newFakeSaveSync(), true, []string{"library_saves"}},
		{"dry run", Options{DryRun: true}, newFakeSaveSync(), true, saveTools3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, rigConfig{opts: tc.opts, deps: func(d *Deps) {
				if tc.f != nil {
					d.SaveSync, d.SaveSyncWrites = tc.f, tc.writes
				}
			}})
			var got []string
			for _, n := range r.srv.ToolNames() {
				if slices.Contains(saveTools3, n) {
					got = append(got, n)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("save tools %v, want %v", got, tc.want)
			}
			if tc.opts.ReadOnly {
				if res, err := r.callErr("library_sync_saves", nil); err == nil {
					t.Errorf("read-only: library_sync_saves ran: %s", text(res))
				}
			}
		})
	}
}

func TestLibrarySaves(t *testing.T) {
	f := newFakeSaveSync()
	r := saveRig(t, Options{}, f)
	zelda := r.game("nes", "The Legend of Zelda")
	c := zeldaConflict(zelda.Path)
	f.set(func(f *fakeSaveSync) {
		f.romID = zeldaROMID
		f.saves = savesync.Saves{
			Local: []savesync.LocalSave{{Slot: "autosave", Path: c.Local, Size: 8192, Modified: saveT1, Hash: c.LocalHash}},
			RomM: []savesync.RemoteSave{
				{ID: 4, File: "zelda-old.srm", Slot: "autosave", Size: 8192, UpdatedAt: saveT0.Add(-time.Hour), From: "cabinet"},
				{ID: 5, File: "zelda.srm", Slot: "autosave", Size: 8192, UpdatedAt: saveT0, Hash: c.RomMHash, From: "handheld", Emulator: "retroarch-fceumm"}},
			Synced:   []savesync.Synced{{ROMID: zeldaROMID, Slot: "autosave", Hash: strings.Repeat("c", 32), SaveID: 4, At: saveT0.Add(-time.Hour), Way: "uploaded"}},
			Conflict: []savesync.Conflict{c},
			Backups:  []savesync.Copy{{Path: c.Copy, Save: "The Legend of Zelda (USA).srm", RomM: true, Size: 8192, MadeAt: saveT1}},
		}
		f.status.State, f.status.Conflicts, f.status.Waiting = savesync.StateConflict, 1, []savesync.Conflict{c}
		f.status.LastSync = saveT1
		f.status.LastSession = savesync.LastSession{ID: 9, At: saveT1, Trigger: "game ended", Games: 1, Conflicts: 1}
	})
	var got SavesResult
	res := r.ok("library_saves", map[string]any{"system": "nes", "game_id": zelda.ID}, &got)
	if calls := f.takeCalls(); !slices.Equal(calls, []string{"Saves nes " + zelda.Path + " The Legend of Zelda"}) {
		t.Errorf("calls %q: the game's path must be ES's own", calls)
	}
	if got.Game.GameID != zelda.ID || got.Game.Path != zelda.Path || got.Game.ROMID == nil || *got.Game.ROMID != zeldaROMID {
		t.Errorf("game %+v", got.Game)
	}
	if len(got.Local) != 1 || got.Local[0].Size != 8192 || deref(got.Local[0].Modified) != "2025-05-01T09:30:00Z" {
		t.Errorf("local %+v", got.Local)
	}
	if len(got.RomM) != 2 || got.RomM[0].ID != 5 || deref(got.RomM[0].From) != "handheld" || got.RomM[1].Hash != nil {
		t.Errorf("romm saves, newest first: %s", mustJSON(t, got.RomM))
	}
	if len(got.LastSynced) != 1 || got.LastSynced[0].Way != "uploaded" || len(got.Backups) != 1 || !got.Backups[0].RomM {
		t.Errorf("last synced %+v, backups %+v", got.LastSynced, got.Backups)
	}
	if len(got.Conflicts) != 1 {
		t.Fatalf("conflicts %+v", got.Conflicts)
	}
	how := got.Conflicts[0].HowToResolve
	if !strings.Contains(how, `game_id: "`+zelda.ID+`"`) || strings.Contains(how, zelda.Path+`"`) || !strings.Contains(how, "library_resolve_save") {
		t.Errorf("how to resolve names the game by ES's id: %q", how)
	}
	if got.Sync.State != savesync.StateConflict || got.Sync.LastSession == nil || got.Sync.LastSession.Session != 9 ||
		got.Sync.LastSession.Trigger != "game ended" || got.Sync.Conflicts != 1 || len(got.Warnings) != 0 {
		t.Errorf("sync %s, warnings %q", mustJSON(t, got.Sync), got.Warnings)
	}
	for _, want := range []string{"The Legend of Zelda (nes), RomM ROM 17.", "On the cabinet: save The Legend of Zelda (USA).srm, 8 KiB",
		"In RomM: zelda.srm (slot autosave), 8 KiB, 2025-04-30T18:00:00Z, from handheld.", "Conflict: The Legend of Zelda: ",
		"Save sync: conflict, last 2025-05-01T09:30:00Z, 1 conflict(s) waiting."} {
		if !strings.Contains(text(res), want) {
			t.Errorf("text lacks %q:\n%s", want, text(res))
		}
	}

	// RomM does not know the game; the sync is off; a standalone system.
	f.set(func(f *fakeSaveSync) { f.romID, f.saves = 0, savesync.Saves{} })
	r.ok("library_saves", map[string]any{"system": "nes", "game_id": zelda.ID}, &got)
	if got.Game.ROMID != nil || len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "RomM is not known to have this game") {
		t.Errorf("unknown to RomM: rom_id %v, warnings %q", got.Game.ROMID, got.Warnings)
	}
	f.set(func(f *fakeSaveSync) {
		f.status.On, f.status.State, f.status.Problem = false, savesync.StateError, "pair again: cabinet romm pair --sync-saves"
	})
	r.ok("library_saves", map[string]any{"system": "nes", "game_id": zelda.ID}, &got)
	if len(got.Warnings) != 1 || got.Warnings[0] != "Save sync is off, so nothing is synced: pair again: cabinet romm pair --sync-saves" {
		t.Errorf("sync off: warnings %q", got.Warnings)
	}
	metroid := r.game("gamecube", "Metroid Prime")
	r.ok("library_saves", map[string]any{"system": "gamecube", "game_id": metroid.ID}, &got)
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "gamecube games are not synced") {
		t.Errorf("standalone: warnings %q", got.Warnings)
	}

	// Errors.
	if msg := r.refused("library_saves", map[string]any{"system": "nes", "game_id": strings.Repeat("0", 32)}); !strings.HasPrefix(msg, "No game with id") {
		t.Errorf("unknown game: %q", msg)
	}
	if msg := r.refused("library_saves", map[string]any{"system": "nes"}); !strings.Contains(msg, "game_id") {
		t.Errorf("no game_id: %q", msg)
	}
	f.set(func(f *fakeSaveSync) { f.savesErr = errors.New("the store is closed") })
	if msg := r.refused("library_saves", map[string]any{"system": "nes", "game_id": zelda.ID}); msg != "Could not read the game's saves: the store is closed" {
		t.Errorf("failing sync: %q", msg)
	}
}

func TestSyncSaves(t *testing.T) {
	f := newFakeSaveSync()
	r := saveRig(t, Options{}, f)
	zelda := r.game("nes", "The Legend of Zelda")
	zg := savesync.Game{System: "nes", ROM: zelda.Path, ROMID: zeldaROMID, Name: zelda.Name}
	c := zeldaConflict(zelda.Path)
	f.set(func(f *fakeSaveSync) {
		f.result = savesync.Result{Session: 12, Items: []savesync.Item{
			{Game: zg, Slot: "autosave", Action: savesync.Downloaded, Detail: "RomM's save is in place", Backup: "/b/zelda.srm.1", Hidden: "/userdata/saves/nes/The Legend of Zelda (USA).state.auto"},
			{Game: zg, Slot: "cabinet-state-auto", Action: savesync.Uploaded, Detail: "4096 bytes"},
			{Game: zg, Slot: "autosave", Action: savesync.Conflicted, Detail: c.Reason, Backup: c.Copy},
			{Game: zg, Slot: "autosave", Action: savesync.Failed, Detail: "download: RomM's content_hash does not match"},
			{Game: zg, Slot: "autosave", Action: savesync.InStep}}}
		f.status.Waiting, f.status.Conflicts = []savesync.Conflict{c}, 1
	})
	var got SyncSavesResult
	res := r.ok("library_sync_saves", map[string]any{"system": "nes", "game_id": zelda.ID}, &got)
	if calls := f.takeCalls(); !slices.Equal(calls, []string{"Sync nes " + zelda.Path}) {
		t.Errorf("calls %q", calls)
	}
	want := syncCounts{Uploaded: 1, Downloaded: 1, Conflict: 1, InStep: 1, Error: 1}
	if got.Outcome != outcomeDone || got.Counts != want || got.Session == nil || *got.Session != 12 || len(got.Items) != 5 ||
		got.Game == nil || got.Game.GameID != zelda.ID {
		t.Errorf("got %s", mustJSON(t, got))
	}
	if it := got.Items[0]; it.Game.GameID != zelda.ID || deref(it.Backup) != "/b/zelda.srm.1" || it.Hidden == nil {
		t.Errorf("item %+v", it)
	}
	if got.Detail != "Synced the saves of The Legend of Zelda (nes) with RomM: 1 uploaded, 1 downloaded, 1 conflict(s), 1 in step, 1 failed." {
		t.Errorf("detail %q", got.Detail)
	}
	wantSent := []string{"POST /api/sync/negotiate", "GET /api/saves/{id}/content → The Legend of Zelda (USA).srm",
		"POST /api/saves The Legend of Zelda (USA).state.auto", "GET /api/saves/{id}/content → " + fileName(c.Copy),
		"POST /api/sync/sessions/12/complete"}
	if !slices.Equal(got.Sent, wantSent) {
		t.Errorf("sent %q\nwant %q", got.Sent, wantSent)
	}
	if len(got.Warnings) != 2 || !strings.Contains(got.Warnings[0], "1 save(s) failed") || !strings.Contains(got.Warnings[1], "hides the downloaded save") {
		t.Errorf("warnings %q", got.Warnings)
	}
	if len(got.Conflicts) != 1 || !strings.Contains(got.Conflicts[0].HowToResolve, zelda.ID) {
		t.Errorf("conflicts %+v", got.Conflicts)
	}
	if !strings.Contains(text(res), "Conflict: The Legend of Zelda: ") || !strings.Contains(text(res), "- The Legend of Zelda (nes) save: downloaded") {
		t.Errorf("text:\n%s", text(res))
	}

	// Every game: the zero Game; every conflict listed.
	other := c
	other.Game = savesync.Game{System: "snes", ROM: "/userdata/roms/snes/x.sfc", ROMID: 3}
	f.set(func(f *fakeSaveSync) {
		f.result = savesync.Result{}
		f.status.Waiting = []savesync.Conflict{c, other}
	})
	r.ok("library_sync_saves", nil, &got)
	if calls := f.takeCalls(); !slices.Equal(calls, []string{"Sync  "}) || got.Game != nil || got.Session != nil ||
		len(got.Conflicts) != 2 || got.Detail != "Synced the saves of every game RomM is known to have with RomM: nothing to upload or download." {
		t.Errorf("every game: calls %q, got %s", calls, mustJSON(t, got))
	}

	// Refusals.
	for _, tc := range []struct {
		name string
		args map[string]any
		set  func(f *fakeSaveSync)
		want string
	}{
		{"system alone", map[string]any{"system": "nes"}, nil, "Give both system and game_id"},
		{"game_id alone", map[string]any{"game_id": zelda.ID}, nil, "Give both system and game_id"},
		{"bad game_id", map[string]any{"system": "nes", "game_id": "../x"}, nil, "input schema"},
		{"unknown game", map[string]any{"system": "nes", "game_id": strings.Repeat("0", 32)}, nil, "No game with id"},
		{"sync off", nil, func(f *fakeSaveSync) { f.status.On, f.status.Problem = false, "" },
			"Save sync is off, so nothing is synced: set cabinet.romm.sync_saves=1"},
		{"RomM failing", map[string]any{"system": "nes", "game_id": zelda.ID}, func(f *fakeSaveSync) { f.syncErr = errors.New("RomM did not answer") },
			"Could not sync the saves of The Legend of Zelda (nes): RomM did not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.set(func(f *fakeSaveSync) {
				f.status.On, f.syncErr = true, nil
				if tc.set != nil {
					tc.set(f)
				}
			})
			f.takeCalls()
			if msg := r.refused("library_sync_saves", tc.args); !strings.Contains(msg, tc.want) {
				t.Errorf("got %q, want %q", msg, tc.want)
			}
			if calls := f.takeCalls(); tc.set == nil && len(calls) != 0 {
				t.Errorf("refused before the sync, yet %q", calls)
			}
		})
	}
}

func TestSyncSavesDryRun(t *testing.T) {
	f := newFakeSaveSync()
	r := saveRig(t, Options{DryRun: true}, f)
	zelda := r.game("nes", "The Legend of Zelda")
	f.set(func(f *fakeSaveSync) {
		f.romID = zeldaROMID
		f.saves = savesync.Saves{Local: []savesync.LocalSave{{Slot: "autosave", Size: 8192}},
			RomM: []savesync.RemoteSave{{ID: 5, Slot: "autosave"}, {ID: 6, Slot: "autosave"}}}
		f.status.Waiting = []savesync.Conflict{zeldaConflict(zelda.Path)}
	})
	var got SyncSavesResult
	r.ok("library_sync_saves", map[string]any{"system": "nes", "game_id": zelda.ID}, &got)
	if calls := f.takeCalls(); !slices.Equal(calls, []string{"Saves nes " + zelda.Path + " The Legend of Zelda"}) {
		t.Errorf("a dry run synced: %q", calls)
	}
	if got.Outcome != outcomeDryRun || !slices.Equal(got.Sent, []string{"POST /api/sync/negotiate"}) || len(got.Items) != 0 ||
		got.Detail != "Would sync the saves of The Legend of Zelda (nes) with RomM: on the cabinet save 8 KiB, in RomM 2 save(s); 1 conflict(s) wait and stay until resolved." {
		t.Errorf("got %s", mustJSON(t, got))
	}
	r.ok("library_sync_saves", nil, &got)
	if calls := f.takeCalls(); len(calls) != 0 || got.Outcome != outcomeDryRun ||
		got.Detail != "Would sync the saves of every game RomM is known to have with RomM; 1 conflict(s) wait and stay until resolved." {
		t.Errorf("every game: calls %q, got %s", calls, mustJSON(t, got))
	}
}

// noteClient is an in-process MCP client of srv that records the progress
// notifications it receives.
type noteClient struct {
	t   *testing.T
	srv *Server
	c   *client.Client

	mu       sync.Mutex
	progress []map[string]any
	barriers int
}

func newNoteClient(t *testing.T, srv *Server) *noteClient {
	t.Helper()
	c, err := client.NewInProcessClient(srv.MCP())
	if err != nil {
		t.Fatal(err)
	}
	nc := &noteClient{t: t, srv: srv, c: c}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		nc.mu.Lock()
		defer nc.mu.Unlock()
		switch n.Method {
		case barrierMethod:
			nc.barriers++
		case "notifications/progress":
			nc.progress = append(nc.progress, n.Params.AdditionalFields)
		}
	})
	ctx := cabinettest.Context(t)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return nc
}

// call calls a tool with a progress token (when not nil) and returns the
// progress notifications it brought, once every one has arrived.
func (nc *noteClient) call(name string, args map[string]any, token mcp.ProgressToken) (*mcp.CallToolResult, []map[string]any) {
	nc.t.Helper()
	nc.mu.Lock()
	from, want := len(nc.progress), nc.barriers+1
	nc.mu.Unlock()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	if token != nil {
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
	}
	res, err := nc.c.CallTool(cabinettest.Context(nc.t), req)
	if err != nil {
		nc.t.Fatalf("call %s: %v", name, err)
	}
	nc.srv.MCP().SendNotificationToAllClients(barrierMethod, nil)
	cabinettest.Await(nc.t, "the barrier notification", nil, func() bool {
		nc.mu.Lock()
		defer nc.mu.Unlock()
		return nc.barriers >= want
	})
	nc.mu.Lock()
	defer nc.mu.Unlock()
	return res, slices.Clone(nc.progress[from:])
}

func TestSyncSavesProgress(t *testing.T) {
	f := newFakeSaveSync()
	r := saveRig(t, Options{}, f)
	nc := newNoteClient(t, r.srv)
	f.set(func(f *fakeSaveSync) { f.steps = 3 })
	res, got := nc.call("library_sync_saves", nil, "sync-1")
	if res.IsError || len(got) != 3 {
		t.Fatalf("isError %v (%s), progress %v; want 3 notifications", res.IsError, text(res), got)
	}
	for i, p := range got {
		if p["progressToken"] != "sync-1" || fmt.Sprint(p["progress"]) != fmt.Sprint(i+1) || fmt.Sprint(p["total"]) != "3" ||
			p["message"] != fmt.Sprintf("Syncing saves with RomM… %d of 3", i+1) {
			t.Errorf("notification %d: %v", i, p)
		}
	}
	if _, got := nc.call("library_sync_saves", nil, 7); len(got) != 3 || fmt.Sprint(got[0]["progressToken"]) != "7" {
		t.Errorf("a numeric token: %v", got)
	}
	if _, got := nc.call("library_sync_saves", nil, nil); len(got) != 0 {
		t.Errorf("without a progress token: %v", got)
	}
}

// TestProgressThrottle: a long pass is reported once per percent at most,
// its last step always, nothing after stop.
func TestProgressThrottle(t *testing.T) {
	var sent []int
	progress, stop := throttled(func(done, total int) { sent = append(sent, done) })
	for i := 1; i <= 1000; i++ {
		progress(i, 1000)
	}
	if len(sent) != 101 || sent[0] != 1 || sent[1] != 10 || sent[len(sent)-1] != 1000 {
		t.Errorf("1000 steps: %d sent (%v…%v)", len(sent), sent[:min(3, len(sent))], sent[max(0, len(sent)-3):])
	}
	sent = nil
	for i := 1; i <= 3; i++ {
		progress(i, 3)
	}
	progress(3, 0)
	stop()
	progress(3, 3)
	if !slices.Equal(sent, []int{1, 2, 3}) {
		t.Errorf("3 steps, then a total of 0 and a call after stop: sent %v", sent)
	}
}

func TestResolveSave(t *testing.T) {
	f := newFakeSaveSync()
	r := saveRig(t, Options{}, f)
	zelda := r.game("nes", "The Legend of Zelda")
	c := zeldaConflict(zelda.Path)
	args := func(slot, keep string) map[string]any {
		return map[string]any{"system": "nes", "game_id": zelda.ID, "slot": slot, "keep": keep}
	}
	f.set(func(f *fakeSaveSync) {
		f.status.Waiting, f.status.Conflicts = []savesync.Conflict{c}, 1
		f.resolved = savesync.Item{Game: c.Game, Slot: "autosave", Action: savesync.Downloaded, Backup: "/userdata/saves/.cabinet-backup/nes/z.srm.2025",
			Hidden: "/userdata/saves/nes/The Legend of Zelda (USA).state.auto", Detail: "RomM's save is in place"}
	})
	var got ResolveSaveResult
	r.ok("library_resolve_save", args("autosave", "romm"), &got)
	if calls := f.takeCalls(); !slices.Equal(calls, []string{"Resolve 17 autosave romm"}) {
		t.Errorf("calls %q", calls)
	}
	if got.Outcome != outcomeDone || got.Keep != "romm" || deref(got.Backup) != "/userdata/saves/.cabinet-backup/nes/z.srm.2025" ||
		got.HiddenBy == nil || got.Game.GameID != zelda.ID || !slices.Equal(got.Sent, []string{"POST /api/saves/5/downloaded"}) ||
		got.Detail != "Put RomM's save of The Legend of Zelda (nes) in place; the cabinet's is kept in /userdata/saves/.cabinet-backup/nes/z.srm.2025." ||
		len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "The Legend of Zelda (USA).state.auto") {
		t.Errorf("keep romm: %s", mustJSON(t, got))
	}

	// Settled: a second call finds no conflict, and says what to do.
	msg := r.refused("library_resolve_save", args("autosave", "romm"))
	if !strings.HasPrefix(msg, "No save conflict waits for The Legend of Zelda (nes) in slot autosave") || !strings.Contains(msg, "library_saves") {
		t.Errorf("no conflict: %q", msg)
	}
	if calls := f.takeCalls(); !slices.Equal(calls, []string{"Saves nes " + zelda.Path + " The Legend of Zelda"}) {
		t.Errorf("without a conflict or RomM's id nothing is resolved: %q", calls)
	}
	// RomM knows the game but no conflict is listed: the sync answers ErrNoConflict.
	f.set(func(f *fakeSaveSync) { f.romID = zeldaROMID })
	if msg := r.refused("library_resolve_save", args("cabinet-state-auto", "local")); !strings.HasPrefix(msg, "No save conflict waits") {
		t.Errorf("ErrNoConflict: %q", msg)
	}
	if calls := f.takeCalls(); len(calls) != 2 || calls[1] != "Resolve 17 cabinet-state-auto local" {
		t.Errorf("calls %q", calls)
	}

	// keep local; the sync failing.
	f.set(func(f *fakeSaveSync) {
		f.status.Waiting = []savesync.Conflict{c}
		f.resolved = savesync.Item{Game: c.Game, Slot: "autosave", Action: savesync.Uploaded, Backup: "/b/zelda.srm.romm"}
	})
	r.ok("library_resolve_save", args("autosave", "local"), &got)
	if got.Detail != "Kept the cabinet's save of The Legend of Zelda (nes): it is now the newest in RomM; RomM's earlier one is kept in /b/zelda.srm.romm." ||
		!slices.Equal(got.Sent, []string{"POST /api/saves The Legend of Zelda (USA).srm (overwrite)"}) || got.HiddenBy != nil {
		t.Errorf("keep local: %s", mustJSON(t, got))
	}
	f.set(func(f *fakeSaveSync) {
		f.status.Waiting = []savesync.Conflict{c}
		f.resolveErr = errors.New("the game is running: its save is the emulator's until it ends; resolve the conflict after")
	})
	if msg := r.refused("library_resolve_save", args("autosave", "local")); msg != "Could not resolve the conflict of The Legend of Zelda (nes): "+
		"the game is running: its save is the emulator's until it ends; resolve the conflict after" {
		t.Errorf("failing: %q", msg)
	}

	// Arguments.
	for _, a := range []map[string]any{args("autosave", "both"), args("slot1", "local"), {"system": "nes", "game_id": zelda.ID, "keep": "local"}} {
		if msg := r.refused("library_resolve_save", a); !strings.Contains(msg, "input schema") {
			t.Errorf("%v: %q", a, msg)
		}
	}
	st := saveTools{ss: f, es: r.esc, guard: newGuard(false, Limits{}.withDefaults(), r.clock), cabinet: "x", loc: time.UTC}
	for _, tc := range []struct {
		a    resolveSaveArgs
		want string
	}{
		{resolveSaveArgs{System: "nes", GameID: zelda.ID, Slot: "autosave", Keep: "both"}, `keep must be "local" (the cabinet's save) or "romm" (RomM's save); got "both".`},
		{resolveSaveArgs{System: "nes", GameID: zelda.ID, Slot: "slot1", Keep: "local"}, `slot must be "autosave" (the battery save) or "cabinet-state-auto" (the auto state); got "slot1".`},
	} {
		if _, err := st.resolveSave(context.Background(), tc.a); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %q", tc.a, err, tc.want)
		}
	}
}

func TestResolveSaveDryRun(t *testing.T) {
	f := newFakeSaveSync()
	r := saveRig(t, Options{DryRun: true}, f)
	zelda := r.game("nes", "The Legend of Zelda")
	c := zeldaConflict(zelda.Path)
	f.set(func(f *fakeSaveSync) { f.status.Waiting = []savesync.Conflict{c} })
	var got ResolveSaveResult
	r.ok("library_resolve_save", map[string]any{"system": "nes", "game_id": zelda.ID, "slot": "autosave", "keep": "romm"}, &got)
	if calls := f.takeCalls(); len(calls) != 0 {
		t.Errorf("a dry run resolved: %q", calls)
	}
	if got.Outcome != outcomeDryRun || got.Detail != "Would put RomM's save of The Legend of Zelda (nes) (zelda.srm) in place; the cabinet's "+
		"The Legend of Zelda (USA).srm would be backed up to /userdata/saves/.cabinet-backup/nes first." {
		t.Errorf("got %s", mustJSON(t, got))
	}
	r.ok("library_resolve_save", map[string]any{"system": "nes", "game_id": zelda.ID, "slot": "autosave", "keep": "local"}, &got)
	if got.Outcome != outcomeDryRun || !strings.HasPrefix(got.Detail, "Would keep the cabinet's save of The Legend of Zelda (nes) and upload it") {
		t.Errorf("keep local: %s", mustJSON(t, got))
	}
	f.set(func(f *fakeSaveSync) { f.status.Waiting, f.romID = nil, zeldaROMID })
	if msg := r.refused("library_resolve_save", map[string]any{"system": "nes", "game_id": zelda.ID, "slot": "autosave", "keep": "local"}); !strings.HasPrefix(msg, "No save conflict waits") {
		t.Errorf("no conflict: %q", msg)
	}
}

// TestSaveScopes: a token without the library scope reads saves but
// cannot sync or resolve them.
func TestSaveScopes(t *testing.T) {
	f := newFakeSaveSync()
	r := saveRig(t, Options{}, f)
	zelda := r.game("nes", "The Legend of Zelda")
	game := map[string]any{"system": "nes", "game_id": zelda.ID}
	resolve := map[string]any{"system": "nes", "game_id": zelda.ID, "slot": "autosave", "keep": "local"}
	call := func(scopes []string, tool string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		ctx, cancel := context.WithTimeout(WithScopes(context.Background(), scopes), 20*time.Second)
		defer cancel()
		res, err := r.client.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	readOnly := []string{ScopeRead, ScopePlay, ScopeHousehold, ScopePower}
	if res := call(readOnly, "library_saves", game); res.IsError {
		t.Errorf("library_saves with read: %s", text(res))
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{{"library_sync_saves", game}, {"library_sync_saves", nil}, {"library_resolve_save", resolve}} {
		if res := call(readOnly, c.tool, c.args); !scopeRefusal(res, ScopeLibrary) {
			t.Errorf("%s without library: %s", c.tool, text(res))
		}
		if res := call([]string{ScopeLibrary}, c.tool, c.args); scopeRefusal(res, ScopeLibrary) || strings.Contains(text(res), "lacks the scope") {
			t.Errorf("%s with library: %s", c.tool, text(res))
		}
	}
	if calls := f.takeCalls(); slices.ContainsFunc(calls, func(c string) bool { return strings.HasPrefix(c, "Sync") }) != true {
		t.Errorf("the library token's sync did not run: %q", calls)
	}
}

func TestGetStatusSaveSync(t *testing.T) {
	r := newRig(t, rigConfig{})
	res := r.ok("batocera_get_status", nil, nil)
	if s, ok := res.StructuredContent.(map[string]any)["save_sync"]; !ok || s != nil {
		t.Errorf("without SaveSync: save_sync %v (present %v), want null", s, ok)
	}
	if strings.Contains(text(res), "Save sync") {
		t.Errorf("without SaveSync the text says %q", text(res))
	}
	f := newFakeSaveSync()
	f.status.State, f.status.Conflicts, f.status.LastSync, f.status.LastError = savesync.StateConflict, 2, saveT1, "RomM did not answer"
	r = saveRig(t, Options{}, f)
	var st statusResult
	res = r.ok("batocera_get_status", nil, &st)
	want := &savesBrief{State: "conflict", LastSync: ptr("2025-05-01T09:30:00Z"), Conflicts: 2, LastError: ptr("RomM did not answer")}
	if mustJSON(t, st.SaveSync) != mustJSON(t, want) {
		t.Errorf("save_sync %s, want %s", mustJSON(t, st.SaveSync), mustJSON(t, want))
	}
	if !strings.Contains(text(res), " Save sync: conflict, 2 conflict(s) waiting (library_saves).") {
		t.Errorf("text %q", text(res))
	}
}

// TestMCPCheckSaves drives the save tools through the official TypeScript
// SDK over Streamable HTTP with --strict conformance checks and its
// output-schema validation: list, read, sync with progress, resolve.
func TestMCPCheckSaves(t *testing.T) {
	cabinettest.Long(t, "four runs of the Node SDK client")
	mcpcheck := cabinettest.NewMCPCheck(t)
	f := newFakeSaveSync()
	r := saveRig(t, Options{}, f)
	zelda := r.game("nes", "The Legend of Zelda")
	c := zeldaConflict(zelda.Path)
	zg := c.Game
	f.set(func(f *fakeSaveSync) {
		f.romID, f.steps = zeldaROMID, 2
		f.saves = savesync.Saves{Local: []savesync.LocalSave{{Slot: "autosave", Path: c.Local, Size: 8192, Modified: saveT1, Hash: c.LocalHash}},
			RomM:     []savesync.RemoteSave{{ID: 5, File: "zelda.srm", Slot: "autosave", Size: 8192, UpdatedAt: saveT0, Hash: c.RomMHash}},
			Conflict: []savesync.Conflict{c}, Backups: []savesync.Copy{{Path: c.Copy, Save: "z.srm", RomM: true, Size: 8192, MadeAt: saveT1}}}
		f.status.Waiting, f.status.Conflicts, f.status.State = []savesync.Conflict{c}, 1, savesync.StateConflict
		f.result = savesync.Result{Session: 3, Items: []savesync.Item{{Game: zg, Slot: "autosave", Action: savesync.Conflicted, Detail: c.Reason, Backup: c.Copy},
			{Game: zg, Slot: "cabinet-state-auto", Action: savesync.Uploaded, Detail: "4096 bytes"}}}
		f.resolved = savesync.Item{Game: zg, Slot: "autosave", Action: savesync.Uploaded, Backup: c.Copy}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// mcp-go v1.2.1 can drop a notification sent just before the result
	// over Streamable HTTP (logging.go): the fake's pass goes on once each
	// progress notification is on the wire, as a real pass does long after.
	progressOut := make(chan struct{}, 16)
	f.set(func(f *fakeSaveSync) {
		f.afterStep = func() {
			select {
			case <-progressOut:
			case <-time.After(20 * time.Second): // the check then fails on the count
			}
		}
	})
	mcpHTTP := server.NewStreamableHTTPServer(r.srv.MCP(), server.WithHTTPContextFunc(
		func(ctx context.Context, _ *http.Request) context.Context { return WithScopes(ctx, Scopes) }))
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mcpHTTP.ServeHTTP(sseWatch{ResponseWriter: w, seen: func(b []byte) {
			for range strings.Count(string(b), `"notifications/progress"`) {
				progressOut <- struct{}{}
			}
		}}, req)
	}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	url := "http://" + ln.Addr().String() + "/mcp"
	check := func(tool string, args map[string]any, extra ...string) cabinettest.MCPReport {
		t.Helper()
		cmdArgs := append([]string{"--strict", "--fail-on-tool-error", "--url", url}, extra...)
		if tool != "" {
			a, _ := json.Marshal(args)
			cmdArgs = append(cmdArgs, "--call", tool, "--args", string(a))
		}
		out, stderr, code := mcpcheck.Run(t, 60*time.Second, nil, cmdArgs...)
		var rep cabinettest.MCPReport
		if jerr := json.Unmarshal(out, &rep); jerr != nil || code != 0 || !rep.OK || (tool != "" && rep.Call == nil) {
			t.Fatalf("mcpcheck %s: exit %d (%v)\nstdout: %s\nstderr: %s", tool, code, jerr, out, stderr)
		}
		return rep
	}
	list := check("", nil)
	var listed []string
	for _, tl := range list.Tools {
		if slices.Contains(saveTools3, tl.Name) {
			listed = append(listed, tl.Name)
			if !tl.HasOutputSchema {
				t.Errorf("%s: no output schema", tl.Name)
			}
		}
	}
	if slices.Sort(listed); !slices.Equal(listed, slices.Sorted(slices.Values(saveTools3))) || len(list.Warnings) != 0 {
		t.Fatalf("listed %v, warnings %v", listed, list.Warnings)
	}
	game := map[string]any{"system": "nes", "game_id": zelda.ID}
	if rep := check("library_saves", game); len(rep.Call.Result.StructuredContent["conflicts"].([]any)) != 1 {
		t.Errorf("library_saves: %v", rep.Call.Result.StructuredContent)
	}
	if rep := check("library_sync_saves", game, "--progress"); len(rep.Call.Progress) != 2 || rep.Call.Result.StructuredContent["outcome"] != "done" {
		t.Errorf("library_sync_saves: progress %v, result %v", rep.Call.Progress, rep.Call.Result.StructuredContent)
	}
	if rep := check("library_resolve_save", map[string]any{"system": "nes", "game_id": zelda.ID, "slot": "autosave", "keep": "local"}); rep.Call.Result.StructuredContent["backup"] != c.Copy {
		t.Errorf("library_resolve_save: %v", rep.Call.Result.StructuredContent)
	}
}

// sseWatch shows what an MCP response writes to seen, as it is written.
type sseWatch struct {
	http.ResponseWriter
	seen func([]byte)
}

func (w sseWatch) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.seen(b[:n])
	return n, err
}

func (w sseWatch) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
