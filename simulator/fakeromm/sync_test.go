package fakeromm

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func negotiate(t *testing.T, base, token string, body any, want int) negotiation {
	t.Helper()
	var n negotiation
	sendJSON(t, "POST", base, "/api/sync/negotiate", token, body, want, &n)
	return n
}

func TestNegotiate(t *testing.T) {
	s, base, clk := writeServer(t)
	tok := s.Token()
	cab, hand := syncDevice(t, s, "Cabinet"), syncDevice(t, s, "Handheld")
	off := s.AddDevice(Device{Name: "Sync off"})
	add := func(rom int, slot, content string, at time.Time, dev string) int {
		t.Helper()
		id, err := s.AddSave(SaveSpec{ROMID: rom, Slot: slot, FileName: "g.srm", Content: []byte(content), UpdatedAt: at, DeviceID: dev})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	t1, t2, t3 := t0.Add(-3*time.Hour), t0.Add(-2*time.Hour), t0.Add(-time.Hour)
	add(ROMAlphaQuest, "autosave", "old", t1, hand)
	newer := add(ROMAlphaQuest, "autosave", "new", t2, hand) // the slot's newest: paired
	add(ROMAlphaQuest, "", "archive", t3, hand)              // null slot: never paired, never offered
	add(ROMCosmicCrusade, "autosave", "c", t2, hand)
	delta := add(ROMDeltaForce, "autosave", "d", t2, hand)
	echo := add(ROMEchoChamber, "autosave", "e", t2, hand)
	fox := add(ROMFoxtrotTales, "autosave", "f", t2, hand)
	if err := s.MarkSynced(cab, delta, t2); err != nil { // synced, unchanged: the cabinet deleted it
		t.Fatal(err)
	}
	if err := s.MarkSynced(cab, echo, t1); err != nil { // synced before it changed
		t.Fatal(err)
	}
	if err := s.SetUntracked(cab, fox, true); err != nil {
		t.Fatal(err)
	}

	body := map[string]any{"device_id": cab, "saves": []any{
		clientSaveBody(ROMAlphaQuest, "autosave", nil, t3),            // newer than the server's, no history
		clientSaveBody(ROMAlphaQuest, nil, md5hex([]byte("new")), t3), // a null slot: upload
		clientSaveBody(ROMBetaRacer, "autosave", nil, t3),             // nothing on the server
	}}
	n := negotiate(t, base, tok, body, 200)
	want := []string{
		"1:upload/Client save is newer (no sync history)",
		"1:upload/Save exists on client but not on server",
		"2:upload/Save exists on client but not on server",
		"3:download/Save exists on server but not on client",
		"5:download/Server save updated since last sync, not present on client",
	}
	if got := n.summary(); !slices.Equal(got, want) {
		t.Errorf("operations\n got %q\nwant %q", got, want)
	}
	if op := n.Operations[0]; *op.SaveID != newer || op.FileName != "g [2025-06-01_10-00-00].srm" ||
		*op.ServerUpdatedAt != "2025-06-01T10:00:00+00:00" || *op.ServerContentHash != md5hex([]byte("new")) {
		t.Errorf("paired op %+v", op)
	}
	if op := n.Operations[2]; op.SaveID != nil || op.FileName != "rom2.srm" || *op.Slot != "autosave" || op.ServerUpdatedAt != nil {
		t.Errorf("upload op %+v", op)
	}
	if n.TotalUpload != 3 || n.TotalDownload != 2 || n.TotalConflict != 0 || n.TotalNoOp != 0 || n.SessionID != 1 {
		t.Errorf("totals %+v", n)
	}

	// Untracked, listed: no_op. A second negotiation cancels the first session.
	clk.Advance(time.Minute)
	n = negotiate(t, base, tok, map[string]any{"device_id": cab, "saves": []any{clientSaveBody(ROMFoxtrotTales, "autosave", nil, t3)}}, 200)
	if got := n.summary(); len(got) != 4 || got[0] != "6:no_op/Save is untracked on this device" || n.Operations[0].ServerUpdatedAt != nil {
		t.Errorf("untracked: %q", got)
	}
	ss := s.SyncSessions()
	if len(ss) != 2 || ss[0].Status != SyncCancelled || ss[1].Status != SyncInProgress || ss[1].Planned != 3 || ss[0].CompletedAt.IsZero() {
		t.Errorf("sessions %+v", ss)
	}

	// rom_ids (5.3): downloads only for those ROMs and the ones sent.
	scoped := map[string]any{"device_id": cab, "rom_ids": []int{ROMCosmicCrusade}, "saves": []any{clientSaveBody(ROMBetaRacer, "autosave", nil, t3)}}
	if got := negotiate(t, base, tok, scoped, 200).summary(); !slices.Equal(got, []string{
		"2:upload/Save exists on client but not on server", "3:download/Save exists on server but not on client"}) {
		t.Errorf("rom_ids: %q", got)
	}

	// The device from a device-bound token; refusals.
	bound := s.IssueToken(WriteScopes(), hand)
	if n := negotiate(t, base, bound, map[string]any{"saves": []any{}}, 200); len(n.Operations) != 0 {
		t.Errorf("handheld has everything: %q", n.summary())
	}
	wantDetail(t, "POST", base, "/api/sync/negotiate", tok, map[string]any{"saves": []any{}}, 400,
		"device_id is required (either in the request payload or implicit via a device-bound client token)")
	wantDetail(t, "POST", base, "/api/sync/negotiate", tok, map[string]any{"device_id": "nope", "saves": []any{}}, 404, "Device with ID nope not found")
	wantDetail(t, "POST", base, "/api/sync/negotiate", tok, map[string]any{"device_id": off, "saves": []any{}}, 400, "Sync is disabled for this device")
	noDevRead := s.IssueToken([]string{ScopeAssetsRead}, "")
	wantDetail(t, "POST", base, "/api/sync/negotiate", noDevRead, map[string]any{"device_id": cab, "saves": []any{}}, 403, "Forbidden")
	code, _, out := send(t, "POST", base, "/api/sync/negotiate", tok, map[string]any{"device_id": cab, "rom_ids": []any{0, "x"},
		"saves": []any{map[string]any{"rom_id": 1}}})
	if code != 422 || !slices.Equal(locs(t, out), []string{"body.saves.0.file_name", "body.saves.0.updated_at", "body.saves.0.file_size_bytes",
		"body.rom_ids.0", "body.rom_ids.1"}) {
		t.Errorf("invalid payload: %d %v", code, locs(t, out))
	}

	// 5.1 ignores rom_ids: the whole library.
	s51, base51 := newServer(t, Options{Version: Version510, Scopes: WriteScopes()})
	s51.SetClock(clk.Now)
	d51 := syncDevice(t, s51, "Cabinet")
	for _, rom := range []int{ROMAlphaQuest, ROMCosmicCrusade} {
		if _, err := s51.AddSave(SaveSpec{ROMID: rom, Slot: "autosave", FileName: "g.srm", Content: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if n := negotiate(t, base51, s51.Token(), map[string]any{"device_id": d51, "rom_ids": []int{ROMAlphaQuest}, "saves": []any{}}, 200); n.TotalDownload != 2 {
		t.Errorf("5.1 with rom_ids: %q", n.summary())
	}
}

func TestSaveContentAndSessions(t *testing.T) {
	s, base, clk := writeServer(t)
	tok := s.Token()
	cab := syncDevice(t, s, "Cabinet")
	id, err := s.AddSave(SaveSpec{ROMID: ROMAlphaQuest, Slot: "autosave", FileName: "Alpha Quest.srm", Content: []byte("battery")})
	if err != nil {
		t.Fatal(err)
	}
	n := negotiate(t, base, tok, map[string]any{"device_id": cab, "saves": []any{}}, 200)

	path := fmt.Sprintf("/api/saves/%d/content?device_id=%s&optimistic=false&session_id=%d", id, cab, n.SessionID)
	code, hdr, body := get(t, base, path, tok)
	if code != 200 || string(body) != "battery" || hdr.Get("Content-Type") != "text/plain; charset=utf-8" ||
		hdr.Get("Content-Disposition") != "attachment; filename*=utf-8''Alpha%20Quest%20%5B2025-06-01_12-00-00%5D.srm" {
		t.Errorf("content: %d %q %v", code, body, hdr)
	}
	if _, _, ok := s.LastSynced(cab, id); ok {
		t.Error("optimistic=false synced the save")
	}
	if got := s.SyncSessions()[0].Completed; got != 1 {
		t.Errorf("session completed %d, want 1", got)
	}
	var a saveAnswer
	sendJSON(t, "POST", base, fmt.Sprintf("/api/saves/%d/downloaded", id), tok, map[string]string{"device_id": cab}, 200, &a)
	if at, _, ok := s.LastSynced(cab, id); !ok || !at.Equal(t0) || len(a.DeviceSyncs) != 1 || !a.DeviceSyncs[0].IsCurrent {
		t.Errorf("confirmed: synced %v %v, %+v", at, ok, a)
	}
	wantDetail(t, "POST", base, "/api/saves/99/downloaded", tok, map[string]string{"device_id": cab}, 404, "Save with ID 99 not found")
	wantDetail(t, "POST", base, fmt.Sprintf("/api/saves/%d/downloaded", id), tok, map[string]string{"device_id": "nope"}, 404, "Device with ID nope not found")

	// The default is optimistic: the download itself syncs.
	other := syncDevice(t, s, "Other")
	get(t, base, fmt.Sprintf("/api/saves/%d/content?device_id=%s", id, other), tok)
	if _, _, ok := s.LastSynced(other, id); !ok {
		t.Error("an optimistic download did not sync the save")
	}

	// Complete: the counts sent replace the session's; only once.
	clk.Advance(time.Minute)
	var done struct {
		Session struct {
			Status              string  `json:"status"`
			OperationsCompleted int     `json:"operations_completed"`
			OperationsFailed    int     `json:"operations_failed"`
			CompletedAt         *string `json:"completed_at"`
		} `json:"session"`
	}
	complete := fmt.Sprintf("/api/sync/sessions/%d/complete", n.SessionID)
	sendJSON(t, "POST", base, complete, tok, map[string]int{"operations_completed": 4, "operations_failed": 1}, 200, &done)
	if done.Session.Status != SyncCompleted || done.Session.OperationsCompleted != 4 || done.Session.OperationsFailed != 1 ||
		done.Session.CompletedAt == nil || *done.Session.CompletedAt != "2025-06-01T12:01:00+00:00" {
		t.Errorf("completed %+v", done)
	}
	wantDetail(t, "POST", base, complete, tok, map[string]int{}, 400, "Session is already COMPLETED")
	wantDetail(t, "POST", base, "/api/sync/sessions/9/complete", tok, map[string]int{}, 404, "Sync session with ID 9 not found")
	getJSON(t, base, fmt.Sprintf("/api/sync/sessions/%d", n.SessionID), tok, 200, nil)
	var list []struct{ ID int }
	getJSON(t, base, "/api/sync/sessions?device_id="+cab, tok, 200, &list)
	if len(list) != 1 {
		t.Errorf("sessions %+v", list)
	}
	var saves []saveAnswer
	getJSON(t, base, "/api/saves?rom_id=1&slot=autosave&device_id="+cab, tok, 200, &saves)
	if len(saves) != 1 || saves[0].DeviceSyncs[0].DeviceID != cab {
		t.Errorf("saves %+v", saves)
	}
	getJSON(t, base, "/api/saves?rom_id=1&slot=other", tok, 200, &saves)
	if len(saves) != 0 {
		t.Errorf("slot filter: %+v", saves)
	}
}

func TestHostileSaves(t *testing.T) {
	s, base, _ := writeServer(t)
	tok := s.Token()
	names := []string{"../x.srm", "a/b.srm", "x\x00.srm", strings.Repeat("n", 300)}
	var ids []int
	for _, n := range names {
		id, err := s.AddSave(SaveSpec{ROMID: ROMAlphaQuest, Slot: "s" + fmt.Sprint(len(ids)), RawFileName: n, Content: []byte("x"),
			ContentHash: strings.Repeat("0", 32)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	var got []saveAnswer
	getJSON(t, base, "/api/saves?rom_id=1", tok, 200, &got)
	for i, a := range got {
		if a.FileName != names[i] || *a.ContentHash != strings.Repeat("0", 32) {
			t.Errorf("save %d: %q %v", i, a.FileName, *a.ContentHash)
		}
	}
	_, hdr, _ := get(t, base, fmt.Sprintf("/api/saves/%d/content", ids[2]), tok)
	if cd := hdr.Get("Content-Disposition"); cd != "attachment; filename*=utf-8''x%00.srm" {
		t.Errorf("Content-Disposition %q", cd)
	}

	// A "2 GiB" save: announced, generated as it is read.
	big, err := s.AddSave(SaveSpec{ROMID: ROMCosmicCrusade, Slot: "autosave", FileName: "big.srm", Generated: 2 << 30})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/saves/%d/content", base, big), nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Range", "bytes=1000-1009")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	part := make([]byte, 10)
	_, err = resp.Body.Read(part)
	resp.Body.Close()
	if resp.StatusCode != 206 || resp.Header.Get("Content-Range") != "bytes 1000-1009/2147483648" || part[0] != GeneratedSaveByte(1000) {
		t.Errorf("generated save: %d %v %v %v", resp.StatusCode, resp.Header, part, err)
	}
	req.Header.Del("Range")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ContentLength != 2<<30 {
		t.Errorf("Content-Length %d", resp.ContentLength)
	}

	// Faults cut the download.
	s.SetFaults(Faults{Path: fmt.Sprintf("/api/saves/%d/content", big), CutAfter: 100})
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_, err = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if err == nil || buf.Len() != 100 {
		t.Errorf("cut: %d bytes, %v", buf.Len(), err)
	}
}
