package tracker

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// Config holds the tracker's rules (cabinet.tracker.* keys). Start from DefaultConfig.
type Config struct {
	// MinSession: shorter sessions are not logged (no session_end, no last-session update, no play
	// time). 0 logs every session.
	MinSession time.Duration
	// IgnoreScreensaverLaunches: a game launched from the screensaver that showed it is not logged.
	IgnoreScreensaverLaunches bool
	// ScreensaverWindow: how recent the screensaver and its game-selected must be for a launch to
	// count as a screensaver launch. <= 0 means 10 s.
	ScreensaverWindow time.Duration
	// ReorderWindow: events are held this long (on the event clock) before they are final, so hooks
	// that ES started together may arrive in any order. Must exceed the 2 s of disorder the tracker
	// promises to absorb. <= 0 means 3 s.
	ReorderWindow time.Duration
	// DuplicateWindow: reports of the same launch from different sources, and repeats of the same
	// cabinet event, within this window count once. <= 0 means 10 s.
	DuplicateWindow time.Duration
}

// DefaultConfig returns the documented defaults: min_session_seconds 60, ignore_screensaver_launches on.
func DefaultConfig() Config {
	return Config{
		MinSession:                60 * time.Second,
		IgnoreScreensaverLaunches: true,
		ScreensaverWindow:         10 * time.Second,
		ReorderWindow:             3 * time.Second,
		DuplicateWindow:           10 * time.Second,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.MinSession < 0 {
		c.MinSession = 0
	}
	if c.ScreensaverWindow <= 0 {
		c.ScreensaverWindow = d.ScreensaverWindow
	}
	if c.ReorderWindow <= 0 {
		c.ReorderWindow = d.ReorderWindow
	}
	if c.DuplicateWindow <= 0 {
		c.DuplicateWindow = d.DuplicateWindow
	}
	return c
}

// StateVersion is the version of State's JSON encoding.
const StateVersion = 1

// Bounds that keep the persisted state small whatever happens.
const (
	maxWindow  = 64 // events held for reordering; beyond it the oldest are made final
	maxMarks   = 64 // time-sensitive events remembered as sent
	maxPending = 16 // time-sensitive events Record left for the next Apply
	maxBoots   = 8  // boot ids remembered, oldest first
)

// State is the tracker's whole memory between hook runs: persisted as JSON (Encode/Decode) in the
// store. Treat it as opaque; its fields are exported only for encoding.
type State struct {
	V int `json:"v"`
	// Core is the checkpoint: the machine after every final event.
	Core Core `json:"core"`
	// Horizon is the newest final event; an event older than it arrives too late to be reordered.
	Horizon Stamp `json:"hz,omitzero"`
	// Window holds recent events in event order; they are replayed on Core at every Apply.
	Window []Event `json:"win,omitempty"`
	// Sent remembers time-sensitive events already emitted, so a replay never emits one twice.
	Sent []Mark `json:"sent,omitempty"`
	// Pending are final time-sensitive events a Record call could not publish, for the next Apply.
	Pending []Pending `json:"pend,omitempty"`
	// Boots lists boot ids oldest first: it orders events of different boots, whose clocks differ.
	Boots []string `json:"boots,omitempty"`
}

// Core is the state machine proper.
type Core struct {
	Online   bool               `json:"on,omitempty"`
	Open     Open               `json:"open,omitzero"` // the running game; ID "" when none
	SS       Screensaver        `json:"ss,omitzero"`
	Sleeping bool               `json:"sleep,omitempty"`
	Last     haentities.Session `json:"last,omitzero"` // last logged session
	PlayTime time.Duration      `json:"play,omitempty"`
	Seen     Stamp              `json:"seen,omitzero"` // newest event applied
	// LastAch is the latest achievement unlocked (the last-achievement sensor).
	LastAch haentities.Achievement `json:"lach,omitzero"`
}

// Open is a running session.
type Open struct {
	haentities.Session
	Start    Stamp  `json:"st"`
	Key      string `json:"key,omitempty"`  // game key of the best path
	Key2     string `json:"key2,omitempty"` // game key of another path seen for it (ES's mangled one)
	NameRank int8   `json:"nr,omitempty"`
	SysRank  int8   `json:"sr,omitempty"`
	PathRank int8   `json:"pr,omitempty"`
	Sources  uint8  `json:"srcs,omitempty"` // sources that reported the start
	Ignored  bool   `json:"ign,omitempty"`  // a screensaver launch: shown live, never logged
	Deferred bool   `json:"def,omitempty"`  // session_start waits until the start is final
}

// Screensaver is the screensaver's state and the game it showed last.
type Screensaver struct {
	On    bool      `json:"on,omitempty"`
	Type  string    `json:"type,omitempty"`
	Start Stamp     `json:"start,omitzero"`
	Stop  Stamp     `json:"stop,omitzero"`
	Sel   Selection `json:"sel,omitzero"`
}

// Selection is a game-selected fired by the screensaver (the game it shows).
type Selection struct {
	Key  string `json:"key,omitempty"`
	Name string `json:"name,omitempty"`
	At   Stamp  `json:"at"`
}

// Mark is a time-sensitive event already emitted.
type Mark struct {
	Type string `json:"t"`
	At   Stamp  `json:"at"`
	Key  string `json:"k,omitempty"` // the game, for session events
}

// Pending is a time-sensitive event waiting for a caller that publishes.
type Pending struct {
	Type        string                 `json:"t"`
	At          Stamp                  `json:"at"`
	Session     haentities.Session     `json:"s,omitzero"`
	Achievement haentities.Achievement `json:"a,omitzero"`
}

// New returns the state of a cabinet the tracker has never seen: online,
// since whatever runs this code runs on it.
func New() State { return State{V: StateVersion, Core: Core{Online: true}} }

// Encode returns the state's JSON.
func Encode(st State) ([]byte, error) {
	st.V = StateVersion
	b, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("encode tracker state: %w", err)
	}
	return b, nil
}

// Decode parses a state written by Encode. Empty input is a new state. A corrupt or foreign state is
// an error; the caller should log it and start from New() (live entities recover at the next event;
// logged sessions live in the store's history, not here).
func Decode(b []byte) (State, error) {
	if len(b) == 0 {
		return New(), nil
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return State{}, fmt.Errorf("decode tracker state: %w", err)
	}
	if st.V != StateVersion {
		return State{}, fmt.Errorf("decode tracker state: version %d, this binary reads %d", st.V, StateVersion)
	}
	if len(st.Window) > maxWindow || len(st.Sent) > maxMarks || len(st.Boots) > maxBoots || len(st.Pending) > maxPending {
		return State{}, fmt.Errorf("decode tracker state: over its bounds (%d events, %d marks, %d boots, %d pending)",
			len(st.Window), len(st.Sent), len(st.Boots), len(st.Pending))
	}
	for i, ev := range st.Window {
		if err := ev.Validate(); err != nil {
			return State{}, fmt.Errorf("decode tracker state: event %d: %w", i, err)
		}
	}
	if st.Core.PlayTime < 0 || st.Core.Last.Duration < 0 {
		return State{}, fmt.Errorf("decode tracker state: negative play time")
	}
	// The window must be in event order for replay; a hand-edited or damaged one is re-sorted.
	if !slices.IsSortedFunc(st.Window, st.compareEvents) {
		slices.SortStableFunc(st.Window, st.compareEvents)
	}
	return st, nil
}

// clone returns a copy whose slices can be changed without touching st's.
func (st State) clone() State {
	st.Window = slices.Clone(st.Window)
	st.Sent = slices.Clone(st.Sent)
	st.Boots = slices.Clone(st.Boots)
	st.Pending = slices.Clone(st.Pending)
	return st
}
