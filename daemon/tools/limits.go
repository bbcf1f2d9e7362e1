package tools

import (
	"math"
	"time"
)

// Bucket is a token bucket: Burst actions at once, then one more every
// Every. A zero Bucket in Limits takes the default.
type Bucket struct {
	Burst int
	Every time.Duration
}

// Limits are the rate limits against runaway loops (mcp-tools.md, Safety).
// They live in process memory, so each `cabinet call` process starts full.
type Limits struct {
	LaunchQuit Bucket // batocera_launch_game and batocera_quit_game share it
	Reload     Bucket // batocera_reload_games
	SaveState  Bucket // batocera_save_state
	LoadState  Bucket // batocera_load_state
	Reset      Bucket // batocera_reset_game
	Message    Bucket // batocera_show_message
	Control    Bucket // pause, save slot, volume, screenshot
	Power      Bucket // batocera_power
}

// DefaultLimits are the contract's numbers, plus budgets for the tools it
// leaves open (generous: they only stop loops).
func DefaultLimits() Limits {
	return Limits{
		LaunchQuit: Bucket{3, 5 * time.Second},
		Reload:     Bucket{2, 20 * time.Second},
		SaveState:  Bucket{3, 10 * time.Second},
		LoadState:  Bucket{3, 10 * time.Second},
		Reset:      Bucket{3, 10 * time.Second},
		Message:    Bucket{5, 2 * time.Second},
		Control:    Bucket{10, time.Second},
		Power:      Bucket{2, 30 * time.Second},
	}
}

// Unlimited are limits no benchmark reaches: a million tokens, one more every microsecond.
func Unlimited() Limits {
	b := Bucket{1_000_000, time.Microsecond}
	return Limits{LaunchQuit: b, Reload: b, SaveState: b, LoadState: b, Reset: b, Message: b, Control: b, Power: b}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	fill := func(b *Bucket, def Bucket) {
		if b.Burst <= 0 || b.Every <= 0 {
			*b = def
		}
	}
	fill(&l.LaunchQuit, d.LaunchQuit)
	fill(&l.Reload, d.Reload)
	fill(&l.SaveState, d.SaveState)
	fill(&l.LoadState, d.LoadState)
	fill(&l.Reset, d.Reset)
	fill(&l.Message, d.Message)
	fill(&l.Control, d.Control)
	fill(&l.Power, d.Power)
	return l
}

// budget names a bucket.
type budget int

const (
	budgetNone budget = iota
	budgetLaunchQuit
	budgetReload
	budgetSaveState
	budgetLoadState
	budgetReset
	budgetMessage
	budgetControl
	budgetPower
	budgetCount
)

func (l Limits) bucket(b budget) Bucket {
	switch b {
	case budgetLaunchQuit:
		return l.LaunchQuit
	case budgetReload:
		return l.Reload
	case budgetSaveState:
		return l.SaveState
	case budgetLoadState:
		return l.LoadState
	case budgetReset:
		return l.Reset
	case budgetMessage:
		return l.Message
	case budgetControl:
		return l.Control
	case budgetPower:
		return l.Power
	}
	return Bucket{}
}

// tokens is a running bucket. It refills continuously; the caller holds the
// guard's lock.
type tokens struct {
	cfg  Bucket
	have float64
	at   time.Time // when have was computed
}

func newTokens(cfg Bucket, now time.Time) *tokens {
	return &tokens{cfg: cfg, have: float64(cfg.Burst), at: now}
}

func (t *tokens) refill(now time.Time) {
	if now.After(t.at) {
		t.have = math.Min(float64(t.cfg.Burst), t.have+float64(now.Sub(t.at))/float64(t.cfg.Every))
		t.at = now
	}
}

// wait is how long until one token is there (0: now).
func (t *tokens) wait(now time.Time) time.Duration {
	t.refill(now)
	if t.have >= 1 {
		return 0
	}
	return time.Duration(math.Ceil((1 - t.have) * float64(t.cfg.Every)))
}

// take takes a token, or takes nothing and says how long to wait.
func (t *tokens) take(now time.Time) time.Duration {
	if w := t.wait(now); w > 0 {
		return w
	}
	t.have--
	return 0
}

// seconds renders a wait rounded up to whole seconds, at least 1.
func seconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
