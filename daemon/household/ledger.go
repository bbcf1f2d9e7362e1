package household

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/playday"
	"github.com/batocera-cabinet/cabinet/hook/store"
)

// ledgers is where the Ledger lives in the store: one record, LedgerKey.
var ledgers = store.Records[Ledger]{Name: "household"}

// LedgerKey is the Ledger's key in its bucket; profiles will add theirs.
const LedgerKey = "household"

// Ledger is what the household's rules remember between moments, restarts
// and boots: the time played (by the play-day rules), the extra time and
// the day's own limit granted for a day, the pause, and the game being
// counted.
type Ledger struct {
	V int `json:"v"`
	// Play is the time played, placed on play days as play_time_today is.
	Play playday.State `json:"play"`
	// Bonus is the extra minutes granted for BonusDay; it lapses when the
	// play day moves on (a trusted midnight).
	BonusDay string `json:"bonus_day,omitempty"`
	Bonus    int    `json:"bonus,omitempty"`
	// TodayLimit is a limit set for TodayDay only (number.batocera_daily_limit).
	TodayDay   string `json:"today_day,omitempty"`
	TodayLimit int    `json:"today_limit,omitempty"`
	// Paused is "pause play now": no game runs until it is turned off.
	Paused bool `json:"paused,omitempty"`
	// Game is the game being counted (nil: none).
	Game *Game `json:"game,omitempty"`
	// Player is the profile playing now ("" none: the cabinet's rules), as Home Assistant, MCP or
	// a game pad chose it.
	Player string `json:"player,omitempty"`
	// Accounts are each profile's own time played, extra time and today's limit; the fields
	// above (Play, Bonus, TodayLimit) are the cabinet's own, for play with no profile.
	Accounts map[string]*Account `json:"accounts,omitempty"`
}

// Account is one profile's time: as the cabinet's, in Ledger.
type Account struct {
	Play       playday.State `json:"play"`
	BonusDay   string        `json:"bonus_day,omitempty"`
	Bonus      int           `json:"bonus,omitempty"`
	TodayDay   string        `json:"today_day,omitempty"`
	TodayLimit int           `json:"today_limit,omitempty"`
}

// as is l seen by one profile ("" the cabinet): its account in the cabinet's fields; Paused,
// the game and the player are the household's.
func (l Ledger) as(profile string) Ledger {
	v := l
	v.Accounts = nil
	if profile == "" {
		return v
	}
	a := l.Accounts[profile]
	if a == nil {
		a = &Account{Play: playday.State{V: 1}}
	}
	v.Play, v.BonusDay, v.Bonus, v.TodayDay, v.TodayLimit = a.Play, a.BonusDay, a.Bonus, a.TodayDay, a.TodayLimit
	return v
}

// put writes back what v (l seen by profile, then changed) holds of the profile's account and
// of the household.
func (l *Ledger) put(profile string, v Ledger) {
	accounts := l.Accounts
	if profile == "" {
		*l = v
	} else {
		base := *l
		base.Paused, base.Game, base.Player = v.Paused, v.Game, v.Player
		*l = base
		if accounts == nil {
			accounts = map[string]*Account{}
		}
		accounts[profile] = &Account{Play: v.Play, BonusDay: v.BonusDay, Bonus: v.Bonus, TodayDay: v.TodayDay, TodayLimit: v.TodayLimit}
	}
	l.Accounts = accounts
}

// observe brings every account's day to m.
func (l *Ledger) observe(m playday.Moment, loc *time.Location) {
	l.Play = playday.Observe(l.Play, m, loc)
	for _, a := range l.Accounts {
		a.Play = playday.Observe(a.Play, m, loc)
	}
}

// Game is a running game as the ledger counts it: from its start on one
// boot's clock; To is the moment it was counted up to.
type Game struct {
	BootID string        `json:"bid"`
	From   time.Duration `json:"f"`
	To     time.Duration `json:"t"`
	Name   string        `json:"name,omitempty"`
	System string        `json:"system,omitempty"`
	// Profile is who plays it, fixed at its launch: choosing another player meanwhile changes
	// neither whose time it counts nor the rules that end it.
	Profile string `json:"profile,omitempty"`
	// Warned are the warning points already shown (minutes); Told says the
	// time left was shown at the start.
	Warned []int `json:"warned,omitempty"`
	Told   bool  `json:"told,omitempty"`
	// Refused says the launch was not allowed: the game is ended and its
	// time not counted.
	Refused bool `json:"refused,omitempty"`
	// Reached says the end was reported (event reached); EndedAt and UpAt
	// are the last attempt to end it and the last "time is up" shown
	// (warn_only), on the boot clock.
	Reached bool          `json:"reached,omitempty"`
	EndedAt time.Duration `json:"ended_at,omitempty"`
	UpAt    time.Duration `json:"up_at,omitempty"`
}

// count adds the game's time since it was last counted (To) to l, up to
// m, and returns its whole span, for session_minutes. Only what is new is
// added: time counted before a clock jump or a new day was folded into the
// day's total, and adding the whole game again would count it twice.
func (g *Game) count(l *Ledger, m playday.Moment, loc *time.Location) *playday.Span {
	if m.Boot > g.To {
		if !g.Refused {
			l.Play = playday.AddSpan(l.Play, playday.Span{From: g.To, To: m.Boot}, m, loc)
		}
		g.To = m.Boot
	}
	return &playday.Span{From: g.From, To: g.To}
}

const ledgerVersion = 1

// NewLedger is an empty ledger.
func NewLedger() Ledger { return Ledger{V: ledgerVersion, Play: playday.State{V: 1}} }

// check bounds a ledger read back from the store.
func (l Ledger) check() error {
	if l.V != ledgerVersion {
		return fmt.Errorf("household ledger version %d, want %d", l.V, ledgerVersion)
	}
	if _, err := playday.Decode(playday.Encode(l.Play)); err != nil {
		return err
	}
	if l.Bonus < 0 || l.Bonus > MaxMinutes || l.TodayLimit < -1 || l.TodayLimit > MaxMinutes {
		return fmt.Errorf("household ledger out of bounds")
	}
	if g := l.Game; g != nil && (g.To < g.From || len(g.Warned) > MaxWarnPoints || len(g.Name) > 1024 || len(g.System) > 256 ||
		len(g.Profile) > 32) {
		return fmt.Errorf("household ledger's game out of bounds")
	}
	if len(l.Accounts) > MaxProfiles*4 || len(l.Player) > 32 {
		return fmt.Errorf("household ledger's profiles out of bounds")
	}
	for name, a := range l.Accounts {
		if a == nil || !ProfileName(name) || a.Bonus < 0 || a.Bonus > MaxMinutes || a.TodayLimit < -1 || a.TodayLimit > MaxMinutes {
			return fmt.Errorf("household ledger's account %q out of bounds", name)
		}
		if _, err := playday.Decode(playday.Encode(a.Play)); err != nil {
			return err
		}
	}
	return nil
}

// clone is a deep copy (the enforcer changes a copy and compares).
func (l Ledger) clone() Ledger {
	b, _ := json.Marshal(l)
	var c Ledger
	_ = json.Unmarshal(b, &c)
	return c
}

// LoadLedger reads the ledger; an unreadable or out-of-bounds one is
// reported and a new one started (it can only give time back, never lose a
// save).
func LoadLedger(s *store.Store) (Ledger, error) {
	var l Ledger
	var found bool
	err := ledgers.View(s, func(b store.Bucket[Ledger]) error {
		var err error
		l, found, err = b.Get(LedgerKey)
		return err
	})
	if err != nil {
		return NewLedger(), fmt.Errorf("read the household's play time: %w", err)
	}
	if !found {
		return NewLedger(), nil
	}
	if err := l.check(); err != nil {
		return NewLedger(), fmt.Errorf("the household's play time in the store is unreadable, starting again: %w", err)
	}
	return l, nil
}

// SaveLedger writes the ledger in one fsynced transaction.
func SaveLedger(s *store.Store, l Ledger) error {
	return ledgers.Update(s, func(b store.Bucket[Ledger]) error { return b.Put(LedgerKey, l) })
}
