package tools

import (
	"fmt"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/savesync"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// The save sync's state and its conflicts as the save tools and
// batocera_get_status show them.

// syncStatus is savesync.Status for the tools.
type syncStatus struct {
	State          string       `json:"state"`
	Asked          bool         `json:"asked"`
	On             bool         `json:"on"`
	Problem        *string      `json:"problem"`
	LastSync       *string      `json:"last_sync"`
	UploadsToday   int          `json:"uploads_today"`
	DownloadsToday int          `json:"downloads_today"`
	Conflicts      int          `json:"conflicts_waiting"`
	LastError      *string      `json:"last_error"`
	LastSession    *lastSession `json:"last_session"`
	BackupBytes    int64        `json:"backup_bytes"`
	BackupDir      string       `json:"backup_dir"`
	NextTry        *string      `json:"next_try"`
}

// lastSession is what the last pass's negotiation with RomM said, and what
// it did.
type lastSession struct {
	Session    int     `json:"session"`
	At         *string `json:"at"`
	Trigger    string  `json:"trigger"`
	Games      int     `json:"games"`
	Uploaded   int     `json:"uploaded"`
	Downloaded int     `json:"downloaded"`
	Conflicts  int     `json:"conflicts"`
	Failed     int     `json:"failed"`
	InStep     int     `json:"in_step"`
}

func statusOf(st savesync.Status, loc *time.Location) syncStatus {
	out := syncStatus{State: st.State, Asked: st.Asked, On: st.On, Problem: orNull(st.Problem, maxErrorRunes),
		LastSync: when(st.LastSync, loc), UploadsToday: st.UploadsToday, DownloadsToday: st.DownloadsToday,
		Conflicts: st.Conflicts, LastError: orNull(st.LastError, maxErrorRunes), BackupBytes: st.BackupBytes,
		BackupDir: untrusted.Clean(st.BackupDir, maxPath), NextTry: when(st.NextTry, loc)}
	if ls := st.LastSession; ls.ID != 0 || !ls.At.IsZero() {
		out.LastSession = &lastSession{Session: ls.ID, At: when(ls.At, loc), Trigger: untrusted.Clean(ls.Trigger, maxShort),
			Games: ls.Games, Uploaded: ls.Uploaded, Downloaded: ls.Download, Conflicts: ls.Conflicts, Failed: ls.Failed,
			InStep: ls.NoOp}
	}
	return out
}

var syncStates = []string{savesync.StateOK, savesync.StateSyncing, savesync.StateConflict, savesync.StateError, savesync.StateOff}

func syncStateArg() js {
	return str("ok: in step; syncing: a pass runs now; conflict: a save changed on both sides waits for a choice "+
		"(library_resolve_save); error: the last pass failed or the sync cannot run (last_error says why); off: "+
		"cabinet.romm.sync_saves is off.", enum(syncStates...))
}

func syncStatusProps() js {
	nstr := func(d string) js { return nullable(str(d)) }
	return object("The save sync as a whole.",
		req("state", syncStateArg()),
		req("asked", boolean("cabinet.romm.sync_saves is on.")),
		req("on", boolean("The sync runs (asked, paired with RomM, with the scopes it needs).")),
		req("problem", nstr("Why the sync cannot run, and what to do; null when it can.")),
		req("last_sync", nstr("When the last pass ended (RFC 3339); null: never.")),
		req("uploads_today", integer("Saves uploaded to RomM today.")),
		req("downloads_today", integer("Saves downloaded from RomM today.")),
		req("conflicts_waiting", integer("Saves changed on both sides, waiting for a choice.")),
		req("last_error", nstr("The last failure, null when none.")),
		req("last_session", nullable(object("RomM's sync session of the last pass: what its negotiation said and "+
			"what was done; null before the first.",
			req("session", integer("RomM's sync session id.")),
			req("at", nstr("When (RFC 3339).")),
			req("trigger", str("What started it: start, idle, game ended, game selected, installed, asked.")),
			req("games", integer("Games in the pass.")),
			req("uploaded", integer("Saves uploaded.")),
			req("downloaded", integer("Saves downloaded.")),
			req("conflicts", integer("Conflicts found or still waiting.")),
			req("failed", integer("Saves that failed.")),
			req("in_step", integer("Saves already the same on both sides."))))),
		req("backup_bytes", integer("Size of Cabinet's save backups.")),
		req("backup_dir", str("Where the backups and RomM's side of conflicts are kept.")),
		req("next_try", nstr("When a pass held back by RomM's failure is tried again (RFC 3339); null: not held back.")))
}

// line renders the status in one sentence.
func (s syncStatus) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Save sync: %s", s.State)
	if s.LastSync != nil {
		fmt.Fprintf(&b, ", last %s", *s.LastSync)
	}
	if s.Conflicts > 0 {
		fmt.Fprintf(&b, ", %d conflict(s) waiting", s.Conflicts)
	}
	b.WriteString(".")
	switch {
	case s.Problem != nil && !s.On:
		b.WriteString(" " + *s.Problem)
	case s.LastError != nil:
		b.WriteString(" Last error: " + *s.LastError)
	}
	return b.String()
}

// savesBrief is the sync's state in batocera_get_status.
type savesBrief struct {
	State     string  `json:"state"`
	LastSync  *string `json:"last_sync"`
	Conflicts int     `json:"conflicts_waiting"`
	LastError *string `json:"last_error"`
}

func savesBriefProps() js {
	return nullable(object("The save sync with RomM in brief (library_saves has a game's saves); null when the "+
		"cabinet does not sync saves.",
		req("state", syncStateArg()),
		req("last_sync", nullable(str("When the last pass ended (RFC 3339); null: never."))),
		req("conflicts_waiting", integer("Saves changed on both sides, waiting for a choice (library_saves, library_resolve_save).")),
		req("last_error", nullable(str("The last failure, null when none.")))))
}

func briefOf(st savesync.Status, loc *time.Location) *savesBrief {
	return &savesBrief{State: st.State, LastSync: when(st.LastSync, loc), Conflicts: st.Conflicts,
		LastError: orNull(st.LastError, maxErrorRunes)}
}

// conflictView is one conflict waiting, with how to settle it.
type conflictView struct {
	Game          saveGameRef `json:"game"`
	Slot          string      `json:"slot"`
	Reason        string      `json:"reason"`
	LocalPath     string      `json:"local_path"`
	LocalChanged  *string     `json:"local_changed"`
	RomMFile      string      `json:"romm_file"`
	RomMUpdatedAt *string     `json:"romm_updated_at"`
	RomMFrom      *string     `json:"romm_from_device"`
	RomMCopy      string      `json:"romm_copy"`
	Found         *string     `json:"found"`
	HiddenBy      *string     `json:"hidden_by"`
	HowToResolve  string      `json:"how_to_resolve"`
}

func conflictOf(c savesync.Conflict, loc *time.Location) conflictView {
	return conflictView{Game: refOf(c.Game), Slot: untrusted.Clean(c.Slot, maxIdent), Reason: untrusted.Clean(c.Reason, maxSaveDetail),
		LocalPath: untrusted.Clean(c.Local, maxPath), LocalChanged: when(c.LocalAt, loc), RomMFile: untrusted.Clean(c.RomMFile, maxName),
		RomMUpdatedAt: when(c.RomMAt, loc), RomMFrom: orNull(c.RomMFrom, maxShort), RomMCopy: untrusted.Clean(c.Copy, maxPath),
		Found: when(c.Found, loc), HiddenBy: orNull(c.HiddenBy, maxPath), HowToResolve: howToResolve(c)}
}

func conflictProps() js {
	nstr := func(d string) js { return nullable(str(d)) }
	return object("",
		req("game", gameRefProps("The game.")),
		req("slot", str("RomM's slot: autosave (the battery save) or cabinet-state-auto (the auto state).")),
		req("reason", str("Why it is a conflict.")),
		req("local_path", str("The cabinet's save, left in place.")),
		req("local_changed", nstr("When the cabinet's save last changed (RFC 3339).")),
		req("romm_file", str("RomM's save's file name.")),
		req("romm_updated_at", nstr("When RomM's save was uploaded (RFC 3339).")),
		req("romm_from_device", nstr("The device that uploaded RomM's save, when RomM says.")),
		req("romm_copy", str("RomM's save, kept on the cabinet until the choice.")),
		req("found", nstr("When the conflict was found (RFC 3339).")),
		req("hidden_by", nstr("A state Batocera loads when the game starts, which hides the battery save either way; null: none.")),
		req("how_to_resolve", str("How to settle it (library_resolve_save), in a sentence or two.")))
}

// conflictsText renders conflicts, one paragraph each.
func conflictsText(cs []conflictView) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString("\nConflict: " + c.HowToResolve)
	}
	return b.String()
}
