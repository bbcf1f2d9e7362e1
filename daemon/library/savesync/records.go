package savesync

import (
	"fmt"
	"strconv"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/store"
)

// What the sync keeps in the store.
var (
	// synced is what was last synced for each (rom, slot): RomM reports a conflict only when
	// the same save record changed on both sides, so a local change made since the last sync
	// and a newer save another device uploaded are told apart here.
	synced = store.Records[Synced]{Name: "savesync"}
	// conflicts are the conflicts waiting for the household, by (rom, slot).
	conflicts = store.Records[Conflict]{Name: "saveconflicts"}
	// games are the games the sync knows RomM has (by ROM path): the idle pass's list.
	games = store.Records[Game]{Name: "savegames"}
	// journal is the sync's history and today's figures: one record.
	journal = store.Records[Journal]{Name: "savejournal"}
)

// Bounds of what is kept.
const (
	maxGames   = 20000
	maxHistory = 100
)

func key(romID int, slot string) string { return strconv.Itoa(romID) + "/" + slot }

// Synced is a save as it was last synced.
type Synced struct {
	ROMID  int    `json:"rom_id"`
	Slot   string `json:"slot"`
	System string `json:"system"`
	ROM    string `json:"rom"`
	// Hash is the content both sides had then.
	Hash string `json:"hash"`
	// SaveID and ServerUpdatedAt are RomM's save then.
	SaveID          int       `json:"save_id"`
	ServerUpdatedAt time.Time `json:"server_updated_at"`
	At              time.Time `json:"at"`
	// Way is how it got in step: uploaded, downloaded, same.
	Way string `json:"way"`
}

// Conflict is a save changed on both sides: the local one stays in place, RomM's is kept in
// Copy until the household chooses (Resolve).
type Conflict struct {
	Game      Game      `json:"game"`
	Slot      string    `json:"slot"`
	Local     string    `json:"local"` // the save's path
	LocalHash string    `json:"local_hash"`
	LocalAt   time.Time `json:"local_at"`
	// RomM's side.
	SaveID   int       `json:"save_id"`
	RomMFile string    `json:"romm_file"` // cleaned, for display
	RomMHash string    `json:"romm_hash"`
	RomMAt   time.Time `json:"romm_at"`
	RomMFrom string    `json:"romm_from,omitempty"` // the device that uploaded it, when RomM says
	Copy     string    `json:"copy"`                // RomM's bytes, in the backup folder
	Reason   string    `json:"reason"`
	Found    time.Time `json:"found"`
	HiddenBy string    `json:"hidden_by,omitempty"` // a state Batocera loads at launch
}

// Journal is the history of syncs and today's figures.
type Journal struct {
	// Day is the local date the figures count (2006-01-02).
	Day       string    `json:"day"`
	Uploads   int       `json:"uploads"`
	Downloads int       `json:"downloads"`
	LastSync  time.Time `json:"last_sync,omitempty"`
	// LastSession is RomM's sync session of the last pass, and what it did.
	LastSession LastSession `json:"last_session"`
	LastError   string      `json:"last_error,omitempty"`
	History     []Entry     `json:"history,omitempty"`
}

// LastSession is one pass as RomM's sync session.
type LastSession struct {
	ID        int       `json:"id"`
	At        time.Time `json:"at"`
	Trigger   string    `json:"trigger"`
	Games     int       `json:"games"`
	Uploaded  int       `json:"uploaded"`
	Download  int       `json:"downloaded"`
	Conflicts int       `json:"conflicts"`
	Failed    int       `json:"failed"`
	NoOp      int       `json:"no_op"`
}

// Entry is one thing the sync did to one save.
type Entry struct {
	At     time.Time `json:"at"`
	Game   string    `json:"game"`
	System string    `json:"system"`
	ROMID  int       `json:"rom_id"`
	Slot   string    `json:"slot"`
	// Action: uploaded, downloaded, conflict, resolved, error.
	Action string `json:"action"`
	Detail string `json:"detail,omitempty"`
	Backup string `json:"backup,omitempty"`
	// Hidden names the state Batocera loads at launch, which hides a downloaded save.
	Hidden string `json:"hidden,omitempty"`
}

// Kept is the sync's records in the store.
type Kept struct{ DB *store.Store }

// Synced is the last sync of (rom, slot); ok is false when there was none.
func (k Kept) Synced(romID int, slot string) (Synced, bool, error) {
	var s Synced
	var ok bool
	err := synced.View(k.DB, func(b store.Bucket[Synced]) error {
		var err error
		s, ok, err = b.Get(key(romID, slot))
		return err
	})
	return s, ok, err
}

func (k Kept) putSynced(s Synced) error {
	return synced.Update(k.DB, func(b store.Bucket[Synced]) error { return b.Put(key(s.ROMID, s.Slot), s) })
}

// Conflicts lists the conflicts waiting.
func (k Kept) Conflicts() ([]Conflict, error) {
	var out []Conflict
	err := conflicts.View(k.DB, func(b store.Bucket[Conflict]) error {
		return b.Each(func(_ string, c Conflict) error {
			out = append(out, c)
			return nil
		})
	})
	return out, err
}

// Conflict is the conflict waiting for (rom, slot).
func (k Kept) Conflict(romID int, slot string) (Conflict, bool, error) {
	var c Conflict
	var ok bool
	err := conflicts.View(k.DB, func(b store.Bucket[Conflict]) error {
		var err error
		c, ok, err = b.Get(key(romID, slot))
		return err
	})
	return c, ok, err
}

func (k Kept) putConflict(c Conflict) error {
	return conflicts.Update(k.DB, func(b store.Bucket[Conflict]) error { return b.Put(key(c.Game.ROMID, c.Slot), c) })
}

func (k Kept) dropConflict(romID int, slot string) error {
	return conflicts.Update(k.DB, func(b store.Bucket[Conflict]) error { return b.Delete(key(romID, slot)) })
}

// Games lists the games known to RomM, by ROM path.
func (k Kept) Games() ([]Game, error) {
	var out []Game
	err := games.View(k.DB, func(b store.Bucket[Game]) error {
		return b.Each(func(_ string, g Game) error {
			out = append(out, g)
			return nil
		})
	})
	return out, err
}

// Game is the known game at ROM path rom.
func (k Kept) Game(rom string) (Game, bool, error) {
	var g Game
	var ok bool
	err := games.View(k.DB, func(b store.Bucket[Game]) error {
		var err error
		g, ok, err = b.Get(rom)
		return err
	})
	return g, ok, err
}

// Remember keeps g as a game RomM knows (its core and name kept when g has none).
func (k Kept) Remember(g Game) error {
	if g.ROM == "" || g.ROMID <= 0 {
		return nil
	}
	return games.Update(k.DB, func(b store.Bucket[Game]) error {
		old, ok, _ := b.Get(g.ROM)
		if ok {
			if g.Core == "" {
				g.Core = old.Core
			}
			if g.Name == "" {
				g.Name = old.Name
			}
			if old == g {
				return nil
			}
		} else if b.Len() >= maxGames {
			return fmt.Errorf("remember a game for save sync: %d are kept already", maxGames)
		}
		return b.Put(g.ROM, g)
	})
}

const journalKey = "journal"

// Journal is the history and today's figures.
func (k Kept) Journal() (Journal, error) {
	var j Journal
	err := journal.View(k.DB, func(b store.Bucket[Journal]) error {
		var err error
		j, _, err = b.Get(journalKey)
		return err
	})
	return j, err
}

// note changes the journal: day is today's date, which restarts the day's figures.
func (k Kept) note(day string, f func(*Journal)) error {
	return journal.Update(k.DB, func(b store.Bucket[Journal]) error {
		j, _, err := b.Get(journalKey)
		if err != nil {
			j = Journal{} // a record that does not decode starts again: it is a history
		}
		if j.Day != day {
			j.Day, j.Uploads, j.Downloads = day, 0, 0
		}
		f(&j)
		if len(j.History) > maxHistory {
			j.History = append([]Entry(nil), j.History[len(j.History)-maxHistory:]...)
		}
		return b.Put(journalKey, j)
	})
}
