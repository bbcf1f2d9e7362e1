package haentities

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// goldenSaveSync are the save sync states whose payloads are pinned: off and never synced, in
// sync, a pass running, a conflict waiting, RomM failing, and hostile text.
func goldenSaveSync() []SaveSyncState {
	last := time.Date(2026, 1, 2, 20, 45, 30, 0, zone)
	return []SaveSyncState{
		{State: SaveSyncOff},
		{State: SaveSyncOK, LastSync: last, UploadsToday: 3, DownloadsToday: 1, BackupBytes: 65536},
		{State: SaveSyncSyncing, LastSync: last, UploadsToday: 3, DownloadsToday: 1, BackupBytes: 65536},
		{State: SaveSyncConflict, LastSync: last, UploadsToday: 3, DownloadsToday: 2, Conflicts: 1, BackupBytes: 73728},
		{State: SaveSyncError, LastSync: last, LastError: "romm: GET /api/saves: connection refused", BackupBytes: 73728},
		{State: "bogus\x1b[31m", UploadsToday: -1, DownloadsToday: -2, Conflicts: -3, BackupBytes: -4,
			LastError: "\u202eevil\x00\n" + strings.Repeat("error ", 100)},
	}
}

func saveSyncStates(s Settings) []Message {
	var out []Message
	for _, st := range goldenSaveSync() {
		out = append(out, SaveSyncStates(s, st, goldenNow)...)
	}
	return out
}

// saveProblems is one save problem of each type, and a hostile one.
func saveProblems(s Settings) []Message {
	return []Message{
		SaveProblemMessage(s, SaveProblem{Kind: SaveProblemConflict, Game: "Super Mario World", System: "snes",
			ROM: "/userdata/roms/snes/Super Mario World (USA).sfc", Slot: "srm", Detail: "changed on the cabinet and in RomM",
			Todo: "Keep one with library_resolve_save; the other is kept as a backup."}, goldenNow),
		SaveProblemMessage(s, SaveProblem{Kind: SaveProblemError, Detail: "romm: GET /api/saves: connection refused",
			Todo: "The saves stay on the cabinet; Cabinet tries again by itself."}, goldenNow),
		SaveProblemMessage(s, SaveProblem{Kind: "weird\u202e", Game: "Tetris\u202e\x1b[1m", System: "gb\u200b",
			ROM: "/userdata/roms/gb/a\xffb.gb", Slot: "state\x00", Detail: "\ttoo\n\nmany   spaces ", Todo: "\u2066do\u2069 it"},
			goldenNow.Add(time.Second)),
	}
}

func TestGoldenSaveSync(t *testing.T) {
	s := daemonSettings()
	checkGolden(t, "states_savesync", render(saveSyncStates(s)))
	checkGolden(t, "events_savesync", render(saveProblems(s)))
}

// TestSaveSyncEntityIDs: the names make HA derive the entity ids of design/ha-entities.md with the
// default device name.
func TestSaveSyncEntityIDs(t *testing.T) {
	want := []string{"sensor.batocera_save_sync", "event.batocera_save_problem"}
	var got []string
	for _, e := range SaveSyncEntities() {
		id := e.Component + "." + haSlug("Batocera "+e.Name)
		got = append(got, id)
		if id != e.Component+".batocera_"+e.Key {
			t.Errorf("%s: HA derives %s from the name %q", e.Key, id, e.Name)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("entity ids %v, want %v", got, want)
	}
}

// TestSaveSyncConfigs: the sensor is an enum with its options and attributes, the event has its two
// types; both are normal entities with the availability topic and no command topic.
func TestSaveSyncConfigs(t *testing.T) {
	s := daemonSettings()
	tests := []struct {
		key  string
		want map[string]any
	}{
		{SaveSyncKey, map[string]any{"name": "Save sync", "unique_id": "batocera_0a1b2c3d_save_sync",
			"state_topic": "batocera/0a1b2c3d/save_sync", "json_attributes_topic": "batocera/0a1b2c3d/save_sync/attributes",
			"device_class": "enum", "options": []any{"ok", "syncing", "conflict", "error", "off"},
			"icon": "mdi:content-save-cog", "availability_topic": "batocera/0a1b2c3d/status", "qos": float64(1)}},
		{SaveProblemKey, map[string]any{"name": "Save problem", "unique_id": "batocera_0a1b2c3d_save_problem",
			"state_topic": "batocera/0a1b2c3d/save_problem", "event_types": []any{"conflict", "error"},
			"icon": "mdi:content-save-alert", "availability_topic": "batocera/0a1b2c3d/status", "qos": float64(1)}},
	}
	cat := map[string]Entity{}
	for _, e := range SaveSyncEntities() {
		cat[e.Key] = e
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			m := Config(s, cat[tt.key], goldenNow)
			var cfg map[string]any
			if err := json.Unmarshal(m.Payload, &cfg); err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				got, _ := json.Marshal(cfg[k])
				want, _ := json.Marshal(v)
				if string(got) != string(want) {
					t.Errorf("%s = %s, want %s", k, got, want)
				}
			}
			for _, absent := range []string{"command_topic", "entity_category", "unit_of_measurement", "state_class", "expire_after"} {
				if _, ok := cfg[absent]; ok {
					t.Errorf("%s: has %s", tt.key, absent)
				}
			}
			if !m.Retain || m.QoS != 1 || m.Kind != KindDiscovery {
				t.Errorf("%s: retain=%v qos=%d kind=%v", m.Topic, m.Retain, m.QoS, m.Kind)
			}
		})
	}
}

// TestSaveSyncDiscovery: cabinet.romm.sync_saves announces both entities from the daemon; off, they
// leave the daemon's set (the outbox clears their configs, TestSaveSyncClearedWhenOff) and a hook
// never announces nor clears them.
func TestSaveSyncDiscovery(t *testing.T) {
	tests := []struct {
		name             string
		daemon, saveSync bool
		announced, kept  bool
	}{
		{"daemon, on", true, true, true, false},
		{"daemon, off", true, false, false, false},
		{"hook, on", false, true, false, true},
		{"hook, off", false, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := goldenSettings()
			s.Daemon, s.SaveSync = tt.daemon, tt.saveSync
			topics, kept := DiscoveryTopics(s), KeptTopics(s)
			for _, e := range SaveSyncEntities() {
				topic := s.ConfigTopic(e.Component, e.Key)
				if got := slices.Contains(topics, topic); got != tt.announced {
					t.Errorf("%s announced %v, want %v", e.Key, got, tt.announced)
				}
				if got := slices.Contains(kept, topic); got != tt.kept {
					t.Errorf("%s kept %v, want %v", e.Key, got, tt.kept)
				}
				if got := s.announces(e.Key); got != tt.announced {
					t.Errorf("announces(%s) = %v, want %v", e.Key, got, tt.announced)
				}
			}
			if got := len(SaveSyncStates(s, SaveSyncState{State: SaveSyncOK}, goldenNow)); (got > 0) != tt.announced {
				t.Errorf("SaveSyncStates gave %d messages with announced=%v", got, tt.announced)
			}
			if s.TakesCommands() {
				t.Errorf("the save sync entities take no commands")
			}
		})
	}
	// The setting gates only its own entities.
	on, off := daemonSettings(), daemonSettings()
	off.SaveSync = false
	if got, want := len(Discovery(on, goldenNow))-len(Discovery(off, goldenNow)), len(SaveSyncEntities()); got != want {
		t.Errorf("sync_saves on adds %d configs, want %d", got, want)
	}
}

// TestSaveSyncStates checks the state and attributes HA gets for each state of the sync.
func TestSaveSyncStates(t *testing.T) {
	last := time.Date(2026, 1, 2, 20, 45, 30, 0, zone)
	tests := []struct {
		name  string
		st    SaveSyncState
		state string
		attrs string
	}{
		{"zero value", SaveSyncState{}, SaveSyncOff,
			`{"last_sync":null,"uploads_today":0,"downloads_today":0,"conflicts_waiting":0,"last_error":null,"backup_bytes":0}`},
		{"ok", SaveSyncState{State: SaveSyncOK, LastSync: last, UploadsToday: 3, DownloadsToday: 1, BackupBytes: 1 << 20}, SaveSyncOK,
			`{"last_sync":"2026-01-02T20:45:30+01:00","uploads_today":3,"downloads_today":1,"conflicts_waiting":0,"last_error":null,"backup_bytes":1048576}`},
		{"syncing", SaveSyncState{State: SaveSyncSyncing}, SaveSyncSyncing, ""},
		{"conflict", SaveSyncState{State: SaveSyncConflict, Conflicts: 2}, SaveSyncConflict,
			`{"last_sync":null,"uploads_today":0,"downloads_today":0,"conflicts_waiting":2,"last_error":null,"backup_bytes":0}`},
		{"error", SaveSyncState{State: SaveSyncError, LastError: "romm:\tdown\n"}, SaveSyncError,
			`{"last_sync":null,"uploads_today":0,"downloads_today":0,"conflicts_waiting":0,"last_error":"romm: down","backup_bytes":0}`},
		{"off", SaveSyncState{State: SaveSyncOff}, SaveSyncOff, ""},
		{"unknown state, negative counts", SaveSyncState{State: "later", UploadsToday: -1, DownloadsToday: -1, Conflicts: -1, BackupBytes: -1},
			NoneState, `{"last_sync":null,"uploads_today":0,"downloads_today":0,"conflicts_waiting":0,"last_error":null,"backup_bytes":0}`},
		{"state with spaces", SaveSyncState{State: " ok"}, NoneState, ""},
	}
	s := daemonSettings()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := SaveSyncStates(s, tt.st, goldenNow)
			if len(msgs) != 2 {
				t.Fatalf("%d messages, want the state and the attributes", len(msgs))
			}
			for _, m := range msgs {
				if !m.Retain || m.QoS != 1 || m.Kind != KindState || len(m.Payload) == 0 || !m.Created.Equal(goldenNow) {
					t.Errorf("%s: retain=%v qos=%d kind=%v created %v payload %q", m.Topic, m.Retain, m.QoS, m.Kind, m.Created, m.Payload)
				}
			}
			if msgs[0].Topic != s.StateTopic(SaveSyncKey) || string(msgs[0].Payload) != tt.state {
				t.Errorf("state %s = %q, want %q", msgs[0].Topic, msgs[0].Payload, tt.state)
			}
			if msgs[1].Topic != s.AttributesTopic(SaveSyncKey) {
				t.Errorf("attributes topic %s", msgs[1].Topic)
			}
			if tt.attrs != "" && string(msgs[1].Payload) != tt.attrs {
				t.Errorf("attributes %s\nwant %s", msgs[1].Payload, tt.attrs)
			}
		})
	}
}

// TestSaveSyncStatesOptions: every state the sensor can publish is one of its options, or None.
func TestSaveSyncStatesOptions(t *testing.T) {
	opts := SaveSyncEntities()[0].Options
	for _, st := range append(goldenSaveSync(), SaveSyncState{}) {
		m := SaveSyncStates(daemonSettings(), st, goldenNow)[0]
		if p := string(m.Payload); p != NoneState && !slices.Contains(opts, p) {
			t.Errorf("state %q is not one of %v", p, opts)
		}
	}
}

func TestSaveProblemMessage(t *testing.T) {
	s := daemonSettings()
	p := SaveProblem{Kind: SaveProblemConflict, Game: "Super Mario World", System: "snes",
		ROM: "/userdata/roms/snes/smw.sfc", Slot: "srm", Detail: "changed on both sides", Todo: "keep one"}
	tests := []struct {
		name string
		p    SaveProblem
		want map[string]any
	}{
		{"conflict", p, map[string]any{"event_type": "conflict", "game": "Super Mario World", "system": "snes",
			"rom": "/userdata/roms/snes/smw.sfc", "slot": "srm", "detail": "changed on both sides", "todo": "keep one"}},
		{"error without a game", SaveProblem{Kind: SaveProblemError, Detail: "RomM is down"}, map[string]any{"event_type": "error",
			"game": nil, "system": nil, "rom": nil, "slot": nil, "detail": "RomM is down", "todo": nil}},
		// HA drops an event whose type it does not know: anything else is an error.
		{"unknown kind", SaveProblem{Kind: "Conflict"}, map[string]any{"event_type": "error",
			"game": nil, "system": nil, "rom": nil, "slot": nil, "detail": nil, "todo": nil}},
		{"no kind", SaveProblem{}, map[string]any{"event_type": "error",
			"game": nil, "system": nil, "rom": nil, "slot": nil, "detail": nil, "todo": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := SaveProblemMessage(s, tt.p, goldenNow)
			if m.Retain || m.QoS != 1 || m.Kind != KindTimeSensitive || m.Topic != "batocera/0a1b2c3d/save_problem" ||
				!m.Created.Equal(goldenNow) || !strings.HasPrefix(m.Key, tt.want["event_type"].(string)+"/") ||
				!strings.HasSuffix(m.Key, "@2026-01-02T20:15:00Z") {
				t.Errorf("message %+v", m)
			}
			var got map[string]any
			if err := json.Unmarshal(m.Payload, &got); err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("payload %s", m.Payload)
			}
		})
	}
	// Two problems at the same instant are two events; the same one twice is one.
	a, b := SaveProblemMessage(s, p, goldenNow), SaveProblemMessage(s, SaveProblem{Kind: SaveProblemConflict, Game: "Tetris"}, goldenNow)
	if a.Key == b.Key {
		t.Errorf("two problems at the same moment share the key %q", a.Key)
	}
	if again := SaveProblemMessage(s, p, goldenNow); again.Key != a.Key {
		t.Errorf("the same problem has keys %q and %q", a.Key, again.Key)
	}
}
