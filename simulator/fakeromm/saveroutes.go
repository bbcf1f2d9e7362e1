package fakeromm

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// The saves routes (endpoints/saves.py, 5.0+): list, one save, the download
// confirmation and tracking. The upload is saveupload.go, the bytes
// savefiles.go, the negotiation sync.go.

// saveRoutes registers the save-sync routes (5.0+).
func (s *Server) saveRoutes(rt *router) {
	v5 := func(v version) bool { return v.simpleRoute }
	rt.add("POST", "/api/sync/negotiate", v5, s.negotiateSync)
	rt.add("GET", "/api/sync/sessions", v5, s.listSyncSessions)
	rt.add("GET", "/api/sync/sessions/{session_id}", v5, s.getSyncSession)
	rt.add("POST", "/api/sync/sessions/{session_id}/complete", v5, s.completeSyncSession)
	rt.add("GET", "/api/saves", v5, s.listSaves)
	rt.add("POST", "/api/saves", v5, s.uploadSave)
	rt.add("GET", "/api/saves/{id}", v5, s.getSave)
	rt.add("GET", "/api/saves/{id}/content", v5, s.saveContent)
	rt.add("POST", "/api/saves/{id}/downloaded", v5, s.confirmSaveDownload)
	rt.add("POST", "/api/saves/{id}/track", v5, s.trackSave(false))
	rt.add("POST", "/api/saves/{id}/untrack", v5, s.trackSave(true))
}

type deviceSyncJSON struct {
	DeviceID     string  `json:"device_id"`
	DeviceName   *string `json:"device_name"`
	LastSyncedAt string  `json:"last_synced_at"`
	IsUntracked  bool    `json:"is_untracked"`
	IsCurrent    bool    `json:"is_current"`
}

type saveJSON struct {
	ID             int              `json:"id"`
	ROMID          int              `json:"rom_id"`
	UserID         int              `json:"user_id"`
	FileName       string           `json:"file_name"`
	FileNameNoTags string           `json:"file_name_no_tags"`
	FileNameNoExt  string           `json:"file_name_no_ext"`
	FileExtension  string           `json:"file_extension"`
	FilePath       string           `json:"file_path"`
	FileSizeBytes  int64            `json:"file_size_bytes"`
	FullPath       string           `json:"full_path"`
	DownloadPath   string           `json:"download_path"`
	MissingFromFS  bool             `json:"missing_from_fs"`
	CreatedAt      string           `json:"created_at"`
	UpdatedAt      string           `json:"updated_at"`
	Emulator       *string          `json:"emulator"`
	Slot           *string          `json:"slot"`
	ContentHash    *string          `json:"content_hash"`
	IsPublic       bool             `json:"is_public"`
	Screenshot     any              `json:"screenshot"`
	OriginDeviceID *string          `json:"origin_device_id"`
	DeviceSyncs    []deviceSyncJSON `json:"device_syncs"`
}

// saveSchema is _build_save_schema: with a device in context, every
// device's sync of the save, the caller's first (a placeholder when it has
// none); without one, no syncs. The caller holds s.state.mu.
func (s *Server) saveSchema(r *saveRow, dev *Device) saveJSON {
	noTags, noExt, ext := fileNameParts(r.fileName)
	out := saveJSON{ID: r.id, ROMID: r.romID, UserID: r.userID, FileName: r.fileName, FileNameNoTags: noTags,
		FileNameNoExt: noExt, FileExtension: ext, FilePath: r.filePath, FileSizeBytes: r.size(),
		FullPath: r.filePath + "/" + r.fileName,
		// str(updated_at): Python's datetime with a space, not isoformat's "T".
		DownloadPath: fmt.Sprintf("/api/saves/%d/content?timestamp=%s", r.id, strings.Replace(pyISO(r.updatedAt), "T", " ", 1)),
		CreatedAt:    pyISO(r.createdAt), UpdatedAt: pyISO(r.updatedAt), Emulator: nonEmpty(r.emulator),
		Slot: nonEmpty(r.slot), ContentHash: nonEmpty(r.hash), OriginDeviceID: nonEmpty(r.origin),
		DeviceSyncs: []deviceSyncJSON{}}
	if dev == nil {
		return out
	}
	type entry struct {
		id string
		d  *deviceSync
	}
	var syncs []entry
	for k, d := range s.state.saves.syncs {
		if k.save == r.id {
			syncs = append(syncs, entry{k.device, d})
		}
	}
	sort.Slice(syncs, func(i, j int) bool {
		if !syncs[i].d.lastSynced.Equal(syncs[j].d.lastSynced) {
			return syncs[i].d.lastSynced.After(syncs[j].d.lastSynced)
		}
		return syncs[i].id < syncs[j].id
	})
	present := false
	for _, e := range syncs {
		var name *string
		if d := s.device(e.id, ownerID); d != nil {
			name = nonEmpty(d.Name)
		}
		present = present || e.id == dev.ID
		out.DeviceSyncs = append(out.DeviceSyncs, deviceSyncJSON{DeviceID: e.id, DeviceName: name,
			LastSyncedAt: pyISO(e.d.lastSynced), IsUntracked: e.d.untracked, IsCurrent: !e.d.lastSynced.Before(r.updatedAt)})
	}
	if !present {
		out.DeviceSyncs = append(out.DeviceSyncs, deviceSyncJSON{DeviceID: dev.ID, DeviceName: nonEmpty(dev.Name),
			LastSyncedAt: pyISO(r.updatedAt)})
	}
	sort.SliceStable(out.DeviceSyncs, func(i, j int) bool {
		return out.DeviceSyncs[i].DeviceID == dev.ID && out.DeviceSyncs[j].DeviceID != dev.ID
	})
	return out
}

// resolveDevice is _resolve_device: "" is no device; a token without need
// (when need is not "") is 403, a device not the user's 404. It answers the
// refusal itself; the caller holds s.state.mu and resolved who before.
func (s *Server) resolveDevice(c *call, who identity, id, need string) (*Device, bool) {
	if id == "" {
		return nil, true
	}
	if need != "" && !who.has(need) {
		writeDetail(c.w, http.StatusForbidden, "Forbidden")
		return nil, false
	}
	d := s.device(id, ownerID)
	if d == nil {
		writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("Device with ID %s not found", id))
		return nil, false
	}
	return d, true
}

func saveNotFound(c *call, id int) {
	writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("Save with ID %d not found", id))
}

// listSaves is GET /api/saves: the user's saves by id, of rom_id (and
// rom_ids, 5.3), platform_id and slot; device_id adds device_syncs (it
// filters nothing).
func (s *Server) listSaves(c *call) {
	romID, _ := c.p.integer("rom_id", 0, nil, nil)
	var romIDs []int
	if s.ver.has53Filters {
		romIDs = c.p.ints("rom_ids")
	}
	platformID, _ := c.p.integer("platform_id", 0, nil, nil)
	deviceID, _ := c.p.str("device_id")
	slot, bySlot := c.p.str("slot")
	if !c.ready(ScopeAssetsRead) {
		return
	}
	who, _ := s.caller(c.r)
	platformOf := map[int]int{}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	dev, ok := s.resolveDevice(c, who, deviceID, ScopeDevicesRead)
	if !ok {
		return
	}
	in := map[int]bool{}
	for _, id := range romIDs {
		in[id] = true
	}
	out := []saveJSON{}
	for _, r := range s.state.saves.rows {
		if platformID != 0 {
			if _, seen := platformOf[r.romID]; !seen {
				m, _ := s.lib.meta(r.romID)
				platformOf[r.romID] = m.PlatformID
			}
		}
		switch {
		case r.userID != ownerID, romID != 0 && r.romID != romID, len(romIDs) > 0 && !in[r.romID],
			platformID != 0 && platformOf[r.romID] != platformID, bySlot && r.slot != slot:
			continue
		}
		out = append(out, s.saveSchema(r, dev))
	}
	writeJSON(c.w, http.StatusOK, out)
}

func (s *Server) getSave(c *call) {
	id := c.p.pathInt("id", c.vars["id"], false)
	deviceID, _ := c.p.str("device_id")
	if !c.ready(ScopeAssetsRead) {
		return
	}
	who, _ := s.caller(c.r)
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	dev, ok := s.resolveDevice(c, who, deviceID, ScopeDevicesRead)
	if !ok {
		return
	}
	r := s.state.saves.row(id, ownerID)
	if r == nil {
		saveNotFound(c, id)
		return
	}
	writeJSON(c.w, http.StatusOK, s.saveSchema(r, dev))
}

// deviceBody reads the {"device_id": …} body of /downloaded, /track and
// /untrack.
func deviceBody(c *call) string {
	var id string
	if b, ok := readBody(c); ok {
		id, _ = b.str("device_id", true, 0, 0)
	}
	return id
}

// confirmSaveDownload is POST /api/saves/{id}/downloaded: the device has
// the save now (what an optimistic download does at once).
func (s *Server) confirmSaveDownload(c *call) {
	s.deviceSaveWrite(c, func(r *saveRow, dev *Device) {
		s.state.saves.upsertSync(dev.ID, r.id, r.updatedAt)
		dev.LastSeen = s.now()
	})
}

// trackSave is POST /api/saves/{id}/untrack (untrack) and /track.
func (s *Server) trackSave(untrack bool) func(*call) {
	return func(c *call) {
		s.deviceSaveWrite(c, func(r *saveRow, dev *Device) { s.state.saves.setUntracked(dev.ID, r.id, untrack, s.now()) })
	}
}

// deviceSaveWrite is the shape of the routes that change a device's view of one save ({id},
// body {device_id}, devices.write): apply runs under the state's lock on the caller's save and
// device, and the save is answered as SaveSchema.
func (s *Server) deviceSaveWrite(c *call, apply func(r *saveRow, dev *Device)) {
	id := c.p.pathInt("id", c.vars["id"], false)
	deviceID := deviceBody(c)
	if !c.writeReady(ScopeDevicesWrite) {
		return
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	r := s.state.saves.row(id, ownerID)
	if r == nil {
		saveNotFound(c, id)
		return
	}
	dev, ok := s.resolveDevice(c, identity{}, deviceID, "")
	if !ok {
		return
	}
	apply(r, dev)
	writeJSON(c.w, http.StatusOK, s.saveSchema(r, dev))
}

// countCompleted is increment_operations_completed (any status).
func (st *saveStore) countCompleted(session, user int) {
	for _, ss := range st.sessions {
		if ss.ID == session && ss.UserID == user {
			ss.Completed++
		}
	}
}
