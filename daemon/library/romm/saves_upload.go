package romm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Save is a save RomM holds (SaveSchema, the fields the cabinet uses). FileName, Slot and Emulator
// are raw like SyncOp's.
type Save struct {
	ID, ROMID    int
	FileName     string // RomM's stored name, with its datetime tag when slotted
	Slot         string
	Emulator     string
	ContentHash  string // md5 hex lowercased; "" when null or not an md5
	OriginDevice string // the uploading device; "" when none
	Size         int64
	UpdatedAt    time.Time
}

// SaveUpload is one save for UploadSave.
type SaveUpload struct {
	ROMID     int
	Emulator  string // "" omitted (null)
	Slot      string // "" omitted: an archival save that never pairs
	DeviceID  string // "" omitted: no 409 check, no sync bookkeeping
	SessionID int    // 0 omitted; else RomM counts the upload in the session
	Overwrite bool   // replace RomM's save even when this device has not synced it (no 409)
	FileName  string // a bare name ("Game.srm"); RomM adds the datetime tag to a slotted one
	Content   []byte // at most MaxSaveBytes
}

// uploadRate is the slowest upload the deadline allows for: c.timeout plus a second for every
// 256 KiB, so that a 64 MiB save has over four minutes.
const uploadRate = 256 << 10

// UploadSave uploads a save (POST /api/saves as multipart, field saveFile; assets.write, and
// devices.write with a DeviceID; 5.0+) and returns the save RomM now has. With a DeviceID RomM
// refuses (409, an error wrapping ErrSaveConflict with RomM's words) a slot whose newest save the
// device has not synced, unless Overwrite; and an upload identical to a save already in the slot
// returns that save, changing nothing (not even the device's sync).
func (c *Client) UploadSave(ctx context.Context, u SaveUpload) (Save, error) {
	const op = "upload a save to RomM"
	switch {
	case !romIDOK(u.ROMID):
		return Save{}, newError(ErrInvalid, nil, "%s: ROM id %d is not a RomM ROM id (they are positive numbers)", op, u.ROMID)
	case u.SessionID < 0 || u.SessionID > 1<<31-1:
		return Save{}, newError(ErrInvalid, nil, "%s: sync session %d is not one RomM issues: negotiate first", op, u.SessionID)
	case len(u.Content) > MaxSaveBytes:
		return Save{}, newError(ErrTooLarge, nil, "%s: the save is %d bytes, more than the %d MiB the cabinet sends", op, len(u.Content), MaxSaveBytes>>20)
	}
	if err := checkSaveName(op, u.FileName); err != nil {
		return Save{}, err
	}
	if err := checkSlotEmulator(op, u.Slot, u.Emulator); err != nil {
		return Save{}, err
	}
	q := url.Values{"rom_id": {strconv.Itoa(u.ROMID)}}
	if u.DeviceID != "" {
		if err := checkDeviceID(op, u.DeviceID); err != nil {
			return Save{}, err
		}
		q.Set("device_id", u.DeviceID)
	}
	if u.Emulator != "" {
		q.Set("emulator", u.Emulator)
	}
	if u.Slot != "" {
		q.Set("slot", u.Slot)
	}
	if u.SessionID > 0 {
		q.Set("session_id", strconv.Itoa(u.SessionID))
	}
	if u.Overwrite {
		q.Set("overwrite", "true")
	}
	v, err := c.require(ctx, "save sync", 5, 0)
	if err != nil {
		return Save{}, err
	}
	payload, ctype, err := saveMultipart(u.FileName, u.Content)
	if err != nil {
		return Save{}, newError(ErrInvalid, nil, "%s: write the upload: %v", op, err)
	}
	scope := "assets.write"
	if u.DeviceID != "" {
		scope = scopeFor2(v, "assets.write", "devices.write")
	}
	w := writeRequest{request: request{path: "/api/saves", query: q, max: maxJSON, scope: scope, version: v, shape: &syncJSON},
		method: http.MethodPost, payload: payload, contentType: ctype,
		timeout: c.timeout + time.Duration(len(payload)/uploadRate)*time.Second}
	status, body, err := c.send(ctx, w)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return Save{}, newError(nil, context.DeadlineExceeded, "RomM did not take the save %s in time (limit %s): check that RomM is running at %s and the network to it",
				cleanLine(u.FileName, 60), w.timeout, c.base.Redacted())
		}
		if u.DeviceID != "" {
			err = c.missingScope(ctx, v, err, probeDevicesWrite, "assets.write")
		}
		return Save{}, err
	}
	detail := c.detail(body)
	switch {
	case status >= 200 && status <= 299:
		return decodeSave(body)
	case status == http.StatusConflict:
		says := ""
		if detail != "" {
			says = fmt.Sprintf(": RomM says %q", detail)
		}
		return Save{}, newError(ErrSaveConflict, nil, "RomM refused the save %s for ROM %d (409)%s: another device changed the slot since this cabinet last synced it; negotiate again, or upload with overwrite to replace RomM's save",
			cleanLine(u.FileName, 60), u.ROMID, says)
	case status == http.StatusNotFound && strings.HasPrefix(detail, "Rom "):
		return Save{}, newError(ErrNotFound, nil, "RomM has no ROM %d: the game is not in RomM's library (or was removed); search again for its id", u.ROMID)
	case status == http.StatusRequestEntityTooLarge:
		return Save{}, newError(ErrTooLarge, nil, "RomM (or its proxy) refused the save %s as too large (413): raise RomM's MAX_ASSET_UPLOAD_SIZE_BYTES or the proxy's body limit",
			cleanLine(u.FileName, 60))
	}
	if err := c.deviceRefusal(status, body, u.DeviceID); err != nil {
		return Save{}, err
	}
	return Save{}, c.writeStatusError(&w, status, body)
}

// saveMultipart is the upload's body: one saveFile part, named name, holding content.
func saveMultipart(name string, content []byte) ([]byte, string, error) {
	var b bytes.Buffer
	b.Grow(len(content) + 512)
	mw := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{}
	// checkSaveName let no quote, backslash or control character through.
	h.Set("Content-Disposition", `form-data; name="saveFile"; filename="`+name+`"`)
	h.Set("Content-Type", "application/octet-stream")
	pw, err := mw.CreatePart(h)
	if err != nil {
		return nil, "", err
	}
	if _, err := pw.Write(content); err != nil {
		return nil, "", err
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return b.Bytes(), mw.FormDataContentType(), nil
}

type rawSave struct {
	ID          *int64          `json:"id"`
	ROMID       *int64          `json:"rom_id"`
	FileName    *string         `json:"file_name"`
	Slot        *string         `json:"slot"`
	Emulator    *string         `json:"emulator"`
	ContentHash *string         `json:"content_hash"`
	Origin      *string         `json:"origin_device_id"`
	Size        *int64          `json:"file_size_bytes"`
	UpdatedAt   json.RawMessage `json:"updated_at"`
}

// save checks one SaveSchema; why says what is wrong with it.
func (r rawSave) save() (Save, string) {
	id, ok1 := asID(derefInt(r.ID))
	rom, ok2 := asID(derefInt(r.ROMID))
	if !ok1 || !ok2 || id == 0 || rom == 0 {
		return Save{}, "has no usable id or rom_id"
	}
	if r.FileName == nil {
		return Save{}, "has no file_name"
	}
	s := Save{ID: id, ROMID: rom, FileName: *r.FileName, Slot: deref(r.Slot), Emulator: deref(r.Emulator),
		ContentHash: md5(deref(r.ContentHash)), Size: derefInt(r.Size)}
	if len(s.FileName) > maxRawName || len(s.Slot) > maxRawName || len(s.Emulator) > maxRawName {
		return Save{}, "has a file_name, slot or emulator longer than 4 KiB"
	}
	if s.Size < 0 {
		return Save{}, "has a negative size"
	}
	if o := deref(r.Origin); deviceIDOK(o) {
		s.OriginDevice = o
	}
	at, ok := parseExpiry(r.UpdatedAt)
	if !ok || at.IsZero() {
		return Save{}, "has no usable updated_at"
	}
	s.UpdatedAt = at
	return s, ""
}

func decodeSave(body []byte) (Save, error) {
	var r rawSave
	if err := json.Unmarshal(body, &r); err != nil {
		return Save{}, newError(ErrBadData, nil, "read RomM's save: %s", jsonProblem(err))
	}
	s, why := r.save()
	if why != "" {
		return Save{}, newError(ErrBadData, nil, "RomM's save %s: check that cabinet.romm.url points at RomM 5.0 or newer", why)
	}
	return s, nil
}

func decodeSaves(body []byte) ([]Save, error) {
	var raw []rawSave
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, newError(ErrBadData, nil, "read RomM's saves: %s", jsonProblem(err))
	}
	out := make([]Save, 0, len(raw))
	for i, r := range raw {
		s, why := r.save()
		if why != "" {
			return nil, newError(ErrBadData, nil, "RomM's save %d of the list %s: check that cabinet.romm.url points at RomM 5.0 or newer", i, why)
		}
		out = append(out, s)
	}
	return out, nil
}

// A scopeProbe is a request RomM refuses with 403 exactly when the token lacks scope, and that
// changes nothing otherwise: its target does not exist (RomM checks the scope first, then answers
// 404).
type scopeProbe struct {
	scope, method, path string
	body                any
}

var (
	probeDevicesRead  = scopeProbe{scope: "devices.read", method: http.MethodGet, path: "/api/devices/0"}
	probeDevicesWrite = scopeProbe{scope: "devices.write", method: http.MethodPost, path: "/api/saves/0/downloaded",
		body: map[string]string{"device_id": "0"}}
)

// scopeFor2 is the scope to name for a route that needs a and b: a on RomM 5.2+, where a 403 is a
// missing scope and missingScope finds out which; both before, where a 403 may be a bad token too.
func scopeFor2(v Version, a, b string) string {
	if v.AtLeast(5, 2) {
		return a
	}
	return a + " and " + b
}

// missingScope turns err, RomM 5.2+'s 403 on a route that needs two scopes, into a ScopeError
// naming the one the token lacks: probe's scope when RomM refuses the probe too, else other. When
// the token lacks both, the probe's is named first. Any other err, or a probe that fails otherwise,
// is returned as it is.
func (c *Client) missingScope(ctx context.Context, v Version, err error, probe scopeProbe, other string) error {
	var se *ScopeError
	if !errors.As(err, &se) || ctx.Err() != nil {
		return err
	}
	_, _, perr := c.send(ctx, writeRequest{request: request{path: probe.path, max: maxErrorBody, scope: probe.scope, version: v},
		method: probe.method, body: probe.body})
	var pe *ScopeError
	switch {
	case errors.As(perr, &pe):
		return &ScopeError{Scope: probe.scope, Route: se.Route}
	case perr == nil:
		return &ScopeError{Scope: other, Route: se.Route}
	}
	return err
}
