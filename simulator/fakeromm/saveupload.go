package fakeromm

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"time"
	"unicode/utf8"
)

// POST /api/saves (endpoints/saves.py add_save): a multipart upload whose
// saveFile part names the file. A slotted upload is a new row whose name
// carries the time ("Game [2025-06-01_12-00-00].srm"); a device that has
// not synced the slot's newest save is refused (409) unless it overwrites;
// content identical to a save already in the slot returns that save and
// changes nothing; otherwise the device is marked synced to the new row.

// MaxAutocleanupLimit is MAX_AUTOCLEANUP_LIMIT's default.
const MaxAutocleanupLimit = 100

// maxSlot is the slot parameter's max_length.
const maxSlot = 255

// upload is what the multipart body held.
type upload struct {
	present  bool // a saveFile part
	hasName  bool // it carried a filename parameter (a file, not a field)
	name     string
	content  []byte
	tooLarge bool
}

// readUpload reads the multipart body, keeping the last saveFile part as
// Starlette's form does; a missing or non-file saveFile is a 422 in c.p.
func readUpload(c *call) upload {
	var u upload
	c.r.Body = http.MaxBytesReader(c.w, c.r.Body, 2*maxSaveUpload)
	if mr, err := c.r.MultipartReader(); err == nil {
		for {
			part, err := mr.NextRawPart()
			if err != nil {
				break
			}
			_, params, _ := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
			if params["name"] != "saveFile" {
				io.Copy(io.Discard, io.LimitReader(part, maxSaveUpload))
				continue
			}
			data, err := io.ReadAll(io.LimitReader(part, maxSaveUpload+1))
			if err != nil {
				break
			}
			name, has := params["filename"]
			u = upload{present: true, hasName: has, name: name, content: data, tooLarge: len(data) > maxSaveUpload}
		}
	}
	switch {
	case !u.present:
		c.p.errs = append(c.p.errs, validationError{Type: "missing", Loc: []any{"body", "saveFile"}, Msg: "Field required", Input: nil})
	case !u.hasName:
		c.p.errs = append(c.p.errs, validationError{Type: "value_error", Loc: []any{"body", "saveFile"},
			Msg: "Value error, Expected UploadFile, received: <class 'str'>", Input: string(u.content), Ctx: map[string]any{"error": map[string]any{}}})
	}
	return u
}

// requiredInt is a required int query parameter.
func requiredInt(p *params, name string) int {
	v, ok := p.str(name)
	if !ok {
		p.required(name)
		return 0
	}
	n, _ := p.checkInt("query", name, v, 0, nil, nil)
	return n
}

func (s *Server) uploadSave(c *call) {
	romID := requiredInt(c.p, "rom_id")
	emulator, _ := c.p.str("emulator")
	slot, _ := c.p.str("slot")
	if n := utf8.RuneCountInString(slot); n > maxSlot {
		c.p.fail("query", "slot", "string_too_long", "String should have at most 255 characters", slot, map[string]any{"max_length": maxSlot})
	}
	deviceID, _ := c.p.str("device_id")
	sessionID, _ := c.p.integer("session_id", 0, nil, nil)
	overwrite, _ := c.p.boolean("overwrite", false)
	autocleanup, _ := c.p.boolean("autocleanup", false)
	keep, _ := c.p.integer("autocleanup_limit", 10, nil, nil)
	u := readUpload(c)
	if !c.ready(ScopeAssetsWrite) {
		return
	}
	if u.tooLarge {
		writeDetail(c.w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Save file exceeds the maximum allowed size of %d bytes", maxSaveUpload))
		return
	}
	if s.failWritesAnswered(c.w) {
		return
	}
	keep = max(1, min(keep, MaxAutocleanupLimit))
	who, _ := s.caller(c.r)
	rom, romOK := s.lib.meta(romID)
	plat, _ := s.lib.platform(rom.PlatformID)

	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	dev, ok := s.resolveDevice(c, who, deviceID, ScopeDevicesWrite)
	switch {
	case !ok:
		return
	case !romOK:
		writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("Rom with id '%d' not found", romID))
		return
	case u.name == "":
		writeDetail(c.w, http.StatusBadRequest, "Save file has no filename")
		return
	}
	name, err := sanitizeFilename(u.name)
	if err != nil {
		writeDetail(c.w, http.StatusBadRequest, "Invalid save filename: "+err.Error())
		return
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	if slot != "" {
		name = datetimeTag(name, now)
	}
	st := &s.state.saves
	dir := savesPath(plat.FSSlug, romID, emulator)
	row := st.find(func(r *saveRow) bool { return r.romID == romID && r.fileName == name && r.slot == slot })
	if dev != nil && !overwrite {
		if msg := st.conflict(dev.ID, romID, slot, row); msg != "" {
			writeDetail(c.w, http.StatusConflict, msg)
			return
		}
	}
	hash := contentHash(u.content)
	if slot != "" && !overwrite {
		if same := st.find(func(r *saveRow) bool { return r.romID == romID && r.slot == slot && r.hash == hash }); same != nil {
			// The file just written is deleted; nothing else changes.
			writeJSON(c.w, http.StatusOK, s.saveSchema(same, dev))
			return
		}
	}
	if row == nil {
		if col := st.find(func(r *saveRow) bool { return r.romID == romID && r.filePath == dir && r.fileName == name }); col != nil && col.hash != hash {
			row = col
		}
	}
	if row != nil {
		row.content, row.generated, row.hash, row.filePath, row.emulator, row.updatedAt = u.content, 0, hash, dir, emulator, now
		if slot != "" {
			row.slot = slot
		}
	} else {
		row = st.add(saveRow{romID: romID, userID: ownerID, fileName: name, emulator: emulator, slot: slot, filePath: dir,
			content: u.content, hash: hash, createdAt: now, updatedAt: now})
		if dev != nil {
			row.origin = dev.ID
		}
	}
	if dev != nil {
		st.upsertSync(dev.ID, row.id, row.updatedAt)
		dev.LastSeen = now
	}
	if sessionID != 0 {
		st.countCompleted(sessionID, ownerID)
	}
	if slot != "" && autocleanup {
		st.cleanup(romID, slot, keep)
	}
	writeJSON(c.w, http.StatusOK, s.saveSchema(row, dev))
}

// conflict is add_save's 409: with a slot, the device must have synced the
// slot's newest save; without one, a same-name save must not have changed
// since the device synced it. "" when there is none.
func (st *saveStore) conflict(device string, romID int, slot string, same *saveRow) string {
	if slot != "" {
		latest := st.latest(romID, slot)
		if latest == nil {
			return ""
		}
		if d := st.syncs[syncKey{device, latest.id}]; d == nil || d.lastSynced.Before(latest.updatedAt) {
			return "Slot has a newer save since your last sync"
		}
		return ""
	}
	if same != nil {
		if d := st.syncs[syncKey{device, same.id}]; d != nil && d.lastSynced.Before(same.updatedAt) {
			return "Save has been updated since your last sync"
		}
	}
	return ""
}

// find is the first row (by id) of the fake's user that match.
func (st *saveStore) find(match func(*saveRow) bool) *saveRow {
	for _, r := range st.rows {
		if r.userID == ownerID && match(r) {
			return r
		}
	}
	return nil
}

// slotRows are the user's rows of a ROM's slot, newest first (the newer
// row first on equal times).
func (st *saveStore) slotRows(romID int, slot string) []*saveRow {
	var out []*saveRow
	for _, r := range st.rows {
		if r.userID == ownerID && r.romID == romID && r.slot == slot {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].updatedAt.Equal(out[j].updatedAt) {
			return out[i].updatedAt.After(out[j].updatedAt)
		}
		return out[i].id > out[j].id
	})
	return out
}

func (st *saveStore) latest(romID int, slot string) *saveRow {
	if rows := st.slotRows(romID, slot); len(rows) > 0 {
		return rows[0]
	}
	return nil
}

// cleanup keeps the newest keep rows of a slot and deletes the rest.
func (st *saveStore) cleanup(romID int, slot string, keep int) {
	rows := st.slotRows(romID, slot)
	if len(rows) <= keep {
		return
	}
	drop := map[int]bool{}
	for _, r := range rows[keep:] {
		drop[r.id] = true
	}
	kept := st.rows[:0]
	for _, r := range st.rows {
		if !drop[r.id] {
			kept = append(kept, r)
		}
	}
	st.rows = kept
	for k := range st.syncs {
		if drop[k.save] {
			delete(st.syncs, k)
		}
	}
}
