package romm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
)

// Save sync (RomM 5.0+, endpoints/sync.py and endpoints/saves.py): the cabinet tells RomM which
// saves it has (NegotiateSync), RomM answers what to do with each (upload, download, conflict,
// no_op) in a sync session, the cabinet moves the bytes (UploadSave, DownloadSave,
// ConfirmSaveDownloaded) and closes the session (CompleteSync).
//
// RomM pairs saves on (rom_id, slot), never on the file name: a slotted upload is stored under a new
// name carrying the time ("Game [2026-06-09_14-49-22].srm"), and the newest row of a slot is the
// one negotiated. A null slot never pairs. RomM's file names are returned raw (bounded): they may
// hold "..", "/" or NUL, and the caller must never use them as paths.

// ClientSave is one save as the cabinet has it (RomM's ClientSaveState).
type ClientSave struct {
	ROMID       int
	FileName    string    // the local name ("Game.srm"); RomM echoes it in an upload op
	Slot        string    // "" sends null (never pairs: always an upload)
	Emulator    string    // "" sends null
	ContentHash string    // md5 hex, "" sends null
	UpdatedAt   time.Time // the file's mtime; sent in UTC to the microsecond
	Size        int64
}

// Sync actions.
const (
	SyncUpload   = "upload"
	SyncDownload = "download"
	SyncConflict = "conflict"
	SyncNoOp     = "no_op"
)

// SyncOp is RomM's answer for one save (SyncOperationSchema). FileName, Slot and Emulator are
// RomM's, raw: only bounded (at most 4 KiB each); the caller validates FileName before any use (it
// may hold "..", "/", NUL). Reason is cleaned (untrusted.Clean, 200).
type SyncOp struct {
	Action          string // one of the Sync* actions
	ROMID           int
	SaveID          int // 0: none (an upload); set for every download and conflict
	FileName        string
	Slot, Emulator  string // "": null
	Reason          string
	ServerUpdatedAt time.Time // zero when null
	ServerHash      string    // md5 hex lowercased; "" when null or not an md5
}

// Negotiation is a sync session and its operations, in RomM's order: the sent saves' first, then
// the downloads of saves the cabinet did not list.
type Negotiation struct {
	SessionID int
	Ops       []SyncOp
}

// Save sync limits.
const (
	// MaxSyncROMIDs is how many ROM ids NegotiateSync may scope a negotiation to (RomM's maxItems).
	MaxSyncROMIDs = 500
	// MaxSaveBytes is the largest save UploadSave sends, and DownloadSave's default bound.
	MaxSaveBytes = 64 << 20
	// maxRawName bounds a file name, slot or emulator as RomM sends it.
	maxRawName = 4 << 10
	// maxSlot is the slot's max_length; maxEmulator the emulator column's size (models/assets.py).
	maxSlot     = 255
	maxEmulator = 50
	// maxSaveName bounds the name the cabinet sends (an ext4 file name).
	maxSaveName   = 255
	capSyncReason = 200
)

var (
	// ErrSaveConflict: RomM refused an upload (409) because the slot has a save this device has not
	// synced (or the save changed since it did). Negotiate again, or upload with Overwrite.
	ErrSaveConflict = errors.New("RomM has a newer save")
	// ErrSyncDisabled: save sync is turned off for this device in RomM.
	ErrSyncDisabled = errors.New("save sync is disabled for this device in RomM")
)

const negotiateOp = "negotiate save sync with RomM"

type clientSaveState struct {
	ROMID       int     `json:"rom_id"`
	FileName    string  `json:"file_name"`
	Slot        *string `json:"slot"`
	Emulator    *string `json:"emulator"`
	ContentHash *string `json:"content_hash"`
	UpdatedAt   string  `json:"updated_at"`
	Size        int64   `json:"file_size_bytes"`
}

type negotiatePayload struct {
	DeviceID *string           `json:"device_id,omitempty"`
	Saves    []clientSaveState `json:"saves"`
	ROMIDs   *[]int            `json:"rom_ids,omitempty"`
}

// NegotiateSync sends the cabinet's saves (POST /api/sync/negotiate, assets.read and devices.read,
// 5.0+) and returns RomM's session and operations. deviceID "" lets RomM take the device of a
// device-bound token. RomM cancels the device's earlier open sessions.
//
// romIDs (at most MaxSyncROMIDs) scopes the downloads RomM offers to those ROMs and the ones a save
// is sent for (an empty, non-nil romIDs: only the latter); it is sent only to RomM 5.3 or newer,
// and nil sends none: older RomMs, and a nil romIDs, get downloads for every slotted save of the
// user's whole library, which the caller filters. A save the device synced before and no longer
// lists is taken as deleted on purpose: RomM offers nothing for it. The request is bounded to
// 1 MiB (some 4,000 saves).
func (c *Client) NegotiateSync(ctx context.Context, deviceID string, saves []ClientSave, romIDs []int) (Negotiation, error) {
	p, err := newNegotiatePayload(deviceID, saves, romIDs)
	if err != nil {
		return Negotiation{}, err
	}
	v, err := c.require(ctx, "save sync", 5, 0)
	if err != nil {
		return Negotiation{}, err
	}
	if romIDs != nil && v.AtLeast(5, 3) {
		ids := append([]int{}, romIDs...)
		p.ROMIDs = &ids
	}
	w := writeRequest{request: request{path: "/api/sync/negotiate", max: maxJSON, scope: scopeFor2(v, "assets.read", "devices.read"),
		version: v, shape: &syncJSON}, method: http.MethodPost, body: p}
	status, body, err := c.send(ctx, w)
	if err != nil {
		return Negotiation{}, c.missingScope(ctx, v, err, probeDevicesRead, "assets.read")
	}
	if status >= 200 && status <= 299 {
		return decodeNegotiation(body)
	}
	if err := c.deviceRefusal(status, body, deviceID); err != nil {
		return Negotiation{}, err
	}
	return Negotiation{}, c.writeStatusError(&w, status, body)
}

// deviceRefusal maps RomM's answers about the device: 404 "Device with ID … not found", 400 "Sync
// is disabled for this device" and 400 "device_id is required"; nil for any other answer.
func (c *Client) deviceRefusal(status int, body []byte, deviceID string) error {
	detail := c.detail(body)
	switch {
	case status == http.StatusNotFound && strings.HasPrefix(detail, "Device "):
		return newError(ErrDeviceUnknown, nil, "RomM does not know device %s for this token's user: register the cabinet again (RegisterDevice) and use the new id",
			cleanLine(deviceID, 60))
	case status == http.StatusBadRequest && strings.HasPrefix(detail, "Sync is disabled"):
		return newError(ErrSyncDisabled, nil, "save sync is turned off for this cabinet's device in RomM: turn it on for the device in RomM, or stop syncing saves")
	case status == http.StatusBadRequest && strings.HasPrefix(detail, "device_id is required"):
		return newError(ErrInvalid, nil, "%s: RomM needs the device id (this token is not bound to a device): register the cabinet and pass its id", negotiateOp)
	}
	return nil
}

func newNegotiatePayload(deviceID string, saves []ClientSave, romIDs []int) (negotiatePayload, error) {
	p := negotiatePayload{Saves: make([]clientSaveState, 0, len(saves))}
	if deviceID != "" {
		if err := checkDeviceID(negotiateOp, deviceID); err != nil {
			return p, err
		}
		p.DeviceID = &deviceID
	}
	if len(romIDs) > MaxSyncROMIDs {
		return p, newError(ErrInvalid, nil, "%s: %d ROM ids, more than RomM takes (%d): scope the negotiation to fewer ROMs, or send none",
			negotiateOp, len(romIDs), MaxSyncROMIDs)
	}
	for _, id := range romIDs {
		if !romIDOK(id) {
			return p, newError(ErrInvalid, nil, "%s: ROM id %d is not a RomM ROM id (they are positive numbers)", negotiateOp, id)
		}
	}
	for i, s := range saves {
		st, err := s.state(i)
		if err != nil {
			return p, err
		}
		p.Saves = append(p.Saves, st)
	}
	return p, nil
}

func romIDOK(id int) bool { return id > 0 && id <= 1<<31-1 }

// state checks save i and writes it as RomM reads it.
func (s ClientSave) state(i int) (clientSaveState, error) {
	bad := func(why string, args ...any) error {
		return newError(ErrInvalid, nil, "%s: save %d (ROM %d): "+why, append([]any{negotiateOp, i, s.ROMID}, args...)...)
	}
	switch {
	case !romIDOK(s.ROMID):
		return clientSaveState{}, bad("the ROM id is not a RomM ROM id (they are positive numbers)")
	case s.UpdatedAt.IsZero() || s.UpdatedAt.UTC().Year() < 1970 || s.UpdatedAt.UTC().Year() > 9999:
		return clientSaveState{}, bad("its time is missing or outside 1970–9999: check the clock")
	case s.Size < 0:
		return clientSaveState{}, bad("its size is negative")
	}
	if err := checkSaveName(negotiateOp, s.FileName); err != nil {
		return clientSaveState{}, err
	}
	if err := checkSlotEmulator(negotiateOp, s.Slot, s.Emulator); err != nil {
		return clientSaveState{}, err
	}
	st := clientSaveState{ROMID: s.ROMID, FileName: s.FileName, Slot: nullable(s.Slot), Emulator: nullable(s.Emulator),
		UpdatedAt: s.UpdatedAt.UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.999999Z07:00"), Size: s.Size}
	if s.ContentHash != "" {
		h := md5(s.ContentHash)
		if h == "" {
			return clientSaveState{}, bad("the content hash is not an MD5 (32 hex digits)")
		}
		st.ContentHash = &h
	}
	return st, nil
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// checkSaveName holds a name the cabinet sends to a bare file name: RomM keeps only what follows
// the last "/", and a quote, a backslash or a control character has no safe place in a multipart
// header.
func checkSaveName(op, name string) error {
	if err := checkField(op, "save's file name", name, true, maxSaveName); err != nil {
		return err
	}
	if len(name) > maxSaveName || name == "." || name == ".." || strings.ContainsAny(name, "/\\\"") {
		return newError(ErrInvalid, nil, "%s: the save's file name %q is not a bare file name of at most %d bytes (no /, \\ or \", not . or ..)",
			op, cleanLine(name, 60), maxSaveName)
	}
	return nil
}

func checkSlotEmulator(op, slot, emulator string) error {
	if err := checkField(op, "slot", slot, false, maxSlot); err != nil {
		return err
	}
	return checkField(op, "emulator", emulator, false, maxEmulator)
}

type rawSyncOp struct {
	Action            *string         `json:"action"`
	ROMID             *int64          `json:"rom_id"`
	SaveID            *int64          `json:"save_id"`
	FileName          *string         `json:"file_name"`
	Slot              *string         `json:"slot"`
	Emulator          *string         `json:"emulator"`
	Reason            *string         `json:"reason"`
	ServerUpdatedAt   json.RawMessage `json:"server_updated_at"`
	ServerContentHash *string         `json:"server_content_hash"`
}

// decodeNegotiation reads SyncNegotiateResponse. An operation RomM's API does not describe (an
// unknown action, a download without a save id, a name over 4 KiB) fails the whole answer: the
// cabinet must not act on half of a plan.
func decodeNegotiation(body []byte) (Negotiation, error) {
	var raw struct {
		SessionID  *int64       `json:"session_id"`
		Operations *[]rawSyncOp `json:"operations"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return Negotiation{}, newError(ErrBadData, nil, "read RomM's sync negotiation: %s", jsonProblem(err))
	}
	sid, ok := int64(0), raw.SessionID != nil
	if ok {
		sid = *raw.SessionID
	}
	if id, idOK := asID(sid); !ok || !idOK || id == 0 || raw.Operations == nil {
		return Negotiation{}, newError(ErrBadData, nil, "RomM's sync negotiation has no session id or no operations: check that cabinet.romm.url points at RomM 5.0 or newer")
	}
	n := Negotiation{SessionID: int(sid), Ops: make([]SyncOp, 0, len(*raw.Operations))}
	for i, r := range *raw.Operations {
		op, why := r.op()
		if why != "" {
			return Negotiation{}, newError(ErrBadData, nil, "RomM's sync operation %d %s: the cabinet does not act on this negotiation", i, why)
		}
		n.Ops = append(n.Ops, op)
	}
	return n, nil
}

// op checks one operation; why says what is wrong with it.
func (r rawSyncOp) op() (SyncOp, string) {
	var op SyncOp
	switch a := deref(r.Action); a {
	case SyncUpload, SyncDownload, SyncConflict, SyncNoOp:
		op.Action = a
	default:
		return op, "has an action RomM's API does not document (" + cleanLine(a, 40) + ")"
	}
	rom, ok := asID(derefInt(r.ROMID))
	if !ok || rom == 0 {
		return op, "has no usable rom_id"
	}
	op.ROMID = rom
	if r.SaveID != nil {
		id, ok := asID(*r.SaveID)
		if !ok || id == 0 {
			return op, "has an impossible save_id"
		}
		op.SaveID = id
	}
	if op.SaveID == 0 && (op.Action == SyncDownload || op.Action == SyncConflict) {
		return op, "is a " + op.Action + " without a save_id"
	}
	if r.FileName == nil {
		return op, "has no file_name"
	}
	op.FileName, op.Slot, op.Emulator = *r.FileName, deref(r.Slot), deref(r.Emulator)
	if len(op.FileName) > maxRawName || len(op.Slot) > maxRawName || len(op.Emulator) > maxRawName {
		return op, "has a file_name, slot or emulator longer than 4 KiB"
	}
	op.Reason = cleanLine(deref(r.Reason), capSyncReason)
	at, ok := parseExpiry(r.ServerUpdatedAt)
	if !ok {
		return op, "has a server_updated_at that is not a date and time"
	}
	op.ServerUpdatedAt, op.ServerHash = at, md5(deref(r.ServerContentHash))
	return op, ""
}

func derefInt(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
