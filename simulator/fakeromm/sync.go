package fakeromm

import (
	"fmt"
	"math"
	"net/http"
	"time"
)

// POST /api/sync/negotiate and the sync sessions (endpoints/sync.py,
// handler/sync/comparison.py). Saves pair on (rom_id, slot) with the
// newest of the user's slotted rows; null-slot rows never pair. Every
// negotiation cancels the device's active sessions and opens a new one.
// rom_ids (5.3) follows the 5.3.1 document's description (downloads only for
// those ROMs and the ones a save is sent for); the rest is RomM's code as of
// 5.2.

// clientSave is one ClientSaveState of a negotiation.
type clientSave struct {
	romID                    int
	fileName                 string
	slot, emulator, hash     string
	updatedAt                time.Time
	hasSlot, hasEmu, hasHash bool
}

type syncOpJSON struct {
	Action            string  `json:"action"`
	ROMID             int     `json:"rom_id"`
	SaveID            *int    `json:"save_id"`
	FileName          string  `json:"file_name"`
	Slot              *string `json:"slot"`
	Emulator          *string `json:"emulator"`
	Reason            string  `json:"reason"`
	ServerUpdatedAt   *string `json:"server_updated_at"`
	ServerContentHash *string `json:"server_content_hash"`
}

func (s *Server) parseNegotiate(c *call) (deviceID string, saves []clientSave, romIDs []int, scoped bool) {
	b, ok := readBody(c)
	if !ok {
		return "", nil, nil, false
	}
	deviceID = deref(b.optStr("device_id", 0))
	items, _ := b.list("saves", true, -1, -1)
	for i, raw := range items {
		it, ok := b.sub(raw, "saves", i)
		if !ok {
			continue
		}
		var cs clientSave
		cs.romID, _ = it.integer("rom_id", true, nil)
		cs.fileName, _ = it.str("file_name", true, 0, 0)
		p := it.optStr("slot", 0)
		if p != nil {
			cs.slot, cs.hasSlot = *p, *p != "" // "" is a null slot here (see saves.go)
		}
		if p = it.optStr("emulator", 0); p != nil {
			cs.emulator, cs.hasEmu = *p, true
		}
		if p = it.optStr("content_hash", 0); p != nil {
			cs.hash, cs.hasHash = *p, true
		}
		cs.updatedAt, _ = it.datetime("updated_at")
		it.integer("file_size_bytes", true, nil)
		saves = append(saves, cs)
	}
	if s.ver.has53Filters {
		romIDs, scoped = b.positiveInts("rom_ids", 500)
	}
	return deviceID, saves, romIDs, scoped
}

// positiveInts is an optional `list[PositiveInt] | None` field of at most
// max items; scoped reports a list (not absent, not null).
func (b *body) positiveInts(name string, max int) (out []int, scoped bool) {
	if _, ok := b.get(name, false); !ok {
		return nil, false
	}
	items, ok := b.list(name, false, -1, max)
	if !ok {
		return nil, false
	}
	for i, raw := range items {
		loc := append(append([]any{}, b.loc...), name, i)
		v, isNum := decodeAny(raw).(float64)
		switch {
		case !isNum || v != math.Trunc(v) || math.Abs(v) > 1<<53:
			b.p.errs = append(b.p.errs, validationError{Type: "int_type", Loc: loc, Msg: "Input should be a valid integer", Input: decodeAny(raw)})
		case v <= 0:
			b.p.errs = append(b.p.errs, validationError{Type: "greater_than", Loc: loc, Msg: "Input should be greater than 0",
				Input: int(v), Ctx: map[string]any{"gt": 0}})
		default:
			out = append(out, int(v))
		}
	}
	return out, true
}

func (s *Server) negotiateSync(c *call) {
	deviceID, saves, romIDs, scoped := s.parseNegotiate(c)
	if !c.ready(ScopeAssetsRead) || !s.authorize(c.w, c.r, ScopeDevicesRead) || s.failWritesAnswered(c.w) {
		return
	}
	who, _ := s.caller(c.r)
	if deviceID == "" {
		deviceID = who.deviceID
	}
	if deviceID == "" {
		writeDetail(c.w, http.StatusBadRequest, "device_id is required (either in the request payload or implicit via a device-bound client token)")
		return
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	dev := s.device(deviceID, ownerID)
	if dev == nil {
		writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("Device with ID %s not found", deviceID))
		return
	}
	if !dev.SyncEnabled {
		writeDetail(c.w, http.StatusBadRequest, "Sync is disabled for this device")
		return
	}
	st := &s.state.saves
	now := s.now().UTC().Truncate(time.Microsecond)
	for _, ss := range st.sessions {
		if ss.DeviceID == dev.ID && ss.UserID == ownerID && (ss.Status == SyncPending || ss.Status == SyncInProgress) {
			ss.Status, ss.CompletedAt, ss.UpdatedAt = SyncCancelled, now, now
		}
	}
	st.sessionSeq++
	session := &SyncSession{ID: st.sessionSeq, DeviceID: dev.ID, UserID: ownerID, Status: SyncPending,
		InitiatedAt: now, CreatedAt: now, UpdatedAt: now}
	st.sessions = append(st.sessions, session)

	ops := st.negotiate(dev.ID, saves, romIDs, scoped)
	totals := map[string]int{}
	for _, op := range ops {
		totals[op.Action]++
	}
	session.Status, session.Planned = SyncInProgress, totals["upload"]+totals["download"]+totals["conflict"]
	dev.LastSeen = now
	writeJSON(c.w, http.StatusOK, map[string]any{"session_id": session.ID, "operations": ops,
		"total_upload": totals["upload"], "total_download": totals["download"], "total_conflict": totals["conflict"],
		"total_no_op": totals["no_op"]})
}

// negotiate is negotiate_sync's operations for the device's saves; the
// caller holds s.state.mu.
func (st *saveStore) negotiate(device string, saves []clientSave, romIDs []int, scoped bool) []syncOpJSON {
	type key struct {
		rom  int
		slot string
	}
	newest := map[key]*saveRow{}
	var order []key // dict insertion order
	for _, r := range st.rows {
		if r.userID != ownerID || r.slot == "" {
			continue
		}
		k := key{r.romID, r.slot}
		cur, seen := newest[k]
		if !seen {
			order = append(order, k)
		}
		if cur == nil || r.updatedAt.After(cur.updatedAt) {
			newest[k] = r
		}
	}
	serverOp := func(action, reason string, r *saveRow, withServer bool) syncOpJSON {
		op := syncOpJSON{Action: action, ROMID: r.romID, SaveID: &r.id, FileName: r.fileName, Slot: nonEmpty(r.slot),
			Emulator: nonEmpty(r.emulator), Reason: reason}
		if withServer {
			op.ServerUpdatedAt, op.ServerContentHash = strp(pyISO(r.updatedAt)), nonEmpty(r.hash)
		}
		return op
	}
	ops := []syncOpJSON{}
	matched := map[int]bool{}
	sent := map[int]bool{}
	for _, cs := range saves {
		sent[cs.romID] = true
		r := newest[key{cs.romID, cs.slot}]
		if !cs.hasSlot || r == nil {
			op := syncOpJSON{Action: "upload", ROMID: cs.romID, FileName: cs.fileName, Reason: "Save exists on client but not on server"}
			if cs.hasSlot {
				op.Slot = &cs.slot
			}
			if cs.hasEmu {
				op.Emulator = &cs.emulator
			}
			ops = append(ops, op)
			continue
		}
		matched[r.id] = true
		d := st.syncs[syncKey{device, r.id}]
		if d != nil && d.untracked {
			ops = append(ops, serverOp("no_op", "Save is untracked on this device", r, false))
			continue
		}
		var synced *time.Time
		if d != nil {
			synced = &d.lastSynced
		}
		action, reason := compareSaveState(cs.hash, cs.updatedAt, r.hash, r.updatedAt, synced)
		ops = append(ops, serverOp(action, reason, r, true))
	}
	wanted := map[int]bool{}
	for _, id := range romIDs {
		wanted[id] = true
	}
	for _, k := range order {
		r := newest[k]
		if matched[r.id] || (scoped && !wanted[r.romID] && !sent[r.romID]) {
			continue
		}
		d := st.syncs[syncKey{device, r.id}]
		switch {
		case d != nil && d.untracked:
		case d != nil && !r.updatedAt.After(d.lastSynced):
			// Synced and unchanged: the client deleted it on purpose.
		case d != nil:
			ops = append(ops, serverOp("download", "Server save updated since last sync, not present on client", r, true))
		default:
			ops = append(ops, serverOp("download", "Save exists on server but not on client", r, true))
		}
	}
	return ops
}

// compareSaveState is handler/sync/comparison.py compare_save_state.
func compareSaveState(clientHash string, clientAt time.Time, serverHash string, serverAt time.Time, synced *time.Time) (string, string) {
	if clientHash != "" && serverHash != "" && clientHash == serverHash {
		return "no_op", "Content is identical"
	}
	if synced != nil {
		clientChanged, serverChanged := clientAt.After(*synced), serverAt.After(*synced)
		switch {
		case clientChanged && serverChanged:
			return "conflict", "Both sides changed since last sync"
		case clientChanged:
			return "upload", "Client save is newer than last sync"
		case serverChanged:
			return "download", "Server save is newer than last sync"
		}
		return "no_op", "No changes since last sync"
	}
	switch {
	case clientAt.After(serverAt):
		return "upload", "Client save is newer (no sync history)"
	case serverAt.After(clientAt):
		return "download", "Server save is newer (no sync history)"
	case clientHash != serverHash:
		return "conflict", "Same timestamp but different content"
	}
	return "no_op", "Saves appear identical"
}
