package haentities

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Save sync entity keys (design/ha-entities.md, "Household", issue 23: saves follow the player). A
// contract with users' HA configurations: never rename one. The names in SaveSyncEntities are chosen
// so HA derives exactly sensor.batocera_save_sync and event.batocera_save_problem with the default
// device name.
const (
	SaveSyncKey    = "save_sync"    // sensor enum: SaveSyncOK … SaveSyncOff, with attributes
	SaveProblemKey = "save_problem" // event: SaveProblemConflict, SaveProblemError
)

// Save sync states (the enum options of save_sync; savesync.StateOK etc. are the same strings).
const (
	SaveSyncOK       = "ok"       // every synced game's saves match RomM's
	SaveSyncSyncing  = "syncing"  // a pass is running
	SaveSyncConflict = "conflict" // a save changed on both sides and waits for a person
	SaveSyncError    = "error"    // RomM failed or the sync cannot run as configured
	SaveSyncOff      = "off"      // the sync is off
)

// Event types of event.batocera_save_problem.
const (
	SaveProblemConflict = "conflict" // a save changed on the cabinet and in RomM: someone chooses
	SaveProblemError    = "error"    // a save could not be synced
)

// SaveSyncEntities is the catalogue of the save sync entities, in publishing order. They are what a
// household reads, so normal entities, not diagnostic ones.
func SaveSyncEntities() []Entity {
	return []Entity{
		{Key: SaveSyncKey, Component: ComponentSensor, Name: "Save sync", Icon: "mdi:content-save-cog", DeviceClass: "enum",
			Options: []string{SaveSyncOK, SaveSyncSyncing, SaveSyncConflict, SaveSyncError, SaveSyncOff}, Attributes: true},
		{Key: SaveProblemKey, Component: ComponentEvent, Name: "Save problem", Icon: "mdi:content-save-alert",
			EventTypes: []string{SaveProblemConflict, SaveProblemError}},
	}
}

// saveSyncOn says whether cabinet.romm.sync_saves, which gates a save sync entity, is on; ok is
// false for any other entity.
func saveSyncOn(s Settings, key string) (on, ok bool) {
	switch key {
	case SaveSyncKey, SaveProblemKey:
		return s.SaveSync, true
	}
	return false, false
}

// SaveSyncState is the save sync as the household sees it (the daemon fills it in from
// savesync.Status).
type SaveSyncState struct {
	State                        string    // one of the SaveSync* states; "" reads as SaveSyncOff
	LastSync                     time.Time // the last pass that reached RomM; zero: never
	UploadsToday, DownloadsToday int       // saves sent to and taken from RomM today
	Conflicts                    int       // conflicts waiting for a person
	LastError                    string    // why the last pass failed; "" when it did not
	BackupBytes                  int64     // the size of the kept backups
}

// saveSyncAttrs are save_sync's attributes. Every key is always there, null when it has no value,
// so templates read None rather than fail on a missing key.
type saveSyncAttrs struct {
	LastSync         *string `json:"last_sync"` // RFC 3339
	UploadsToday     int     `json:"uploads_today"`
	DownloadsToday   int     `json:"downloads_today"`
	ConflictsWaiting int     `json:"conflicts_waiting"`
	LastError        *string `json:"last_error"`
	BackupBytes      int64   `json:"backup_bytes"`
}

// SaveSyncStates builds the retained state of save_sync (an unknown state publishes None, which HA
// reads as unknown) and its attributes, when s announces it; nil otherwise.
func SaveSyncStates(s Settings, st SaveSyncState, now time.Time) []Message {
	if !s.announces(SaveSyncKey) {
		return nil
	}
	state := st.State
	switch state {
	case "":
		state = SaveSyncOff
	case SaveSyncOK, SaveSyncSyncing, SaveSyncConflict, SaveSyncError, SaveSyncOff:
	default:
		state = NoneState
	}
	a := saveSyncAttrs{
		LastSync:         optional(formatTime(st.LastSync)),
		UploadsToday:     max(st.UploadsToday, 0),
		DownloadsToday:   max(st.DownloadsToday, 0),
		ConflictsWaiting: max(st.Conflicts, 0),
		LastError:        optional(clean(st.LastError)),
		BackupBytes:      max(st.BackupBytes, 0),
	}
	return []Message{
		retained(s.StateTopic(SaveSyncKey), []byte(state), KindState, now),
		retained(s.AttributesTopic(SaveSyncKey), marshal(a), KindState, now),
	}
}

// SaveProblem is one save that needs a person, or could not be synced. Every text comes from
// outside (RomM, file names, error messages) and is cleaned.
type SaveProblem struct {
	Kind   string // SaveProblemConflict or SaveProblemError; any other reads as SaveProblemError
	Game   string // the game's title
	System string // the Batocera system
	ROM    string // the ROM's path
	Slot   string // the save's slot (battery save, auto state…)
	Detail string // what happened
	Todo   string // what to do next
}

type saveProblemEvent struct {
	EventType string  `json:"event_type"`
	Game      *string `json:"game"`
	System    *string `json:"system"`
	ROM       *string `json:"rom"`
	Slot      *string `json:"slot"`
	Detail    *string `json:"detail"`
	Todo      *string `json:"todo"`
}

// SaveProblemMessage is a save_problem event (not retained). Game, system and slot are capped at
// 255 characters; the ROM path, the detail and what to do at 1,024 (a conflict's instructions name
// the MCP call that settles it), so the whole event stays under the 16 KiB of attributes HA's
// recorder stores. Time-sensitive like the other events: a late one is dropped, and nothing is lost
// with it, since save_sync keeps the count of conflicts waiting and the last error. The key tells
// apart problems built at the same instant.
func SaveProblemMessage(s Settings, p SaveProblem, now time.Time) Message {
	kind := p.Kind
	if kind != SaveProblemConflict {
		kind = SaveProblemError // an event type HA does not know would be dropped
	}
	e := saveProblemEvent{EventType: kind, Game: optional(clean(p.Game)), System: optional(clean(p.System)),
		ROM: optional(cleanAttr(p.ROM)), Slot: optional(clean(p.Slot)), Detail: optional(cleanAttr(p.Detail)),
		Todo: optional(cleanAttr(p.Todo))}
	payload := marshal(e)
	sum := sha256.Sum256(payload)
	key := kind + "/" + hex.EncodeToString(sum[:8]) + "@" + now.UTC().Format(time.RFC3339Nano)
	return event(s.StateTopic(SaveProblemKey), payload, KindTimeSensitive, key, now)
}
