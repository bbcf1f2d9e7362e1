package tracker

import (
	"strconv"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// emit turns effects into output. final effects come from events that will never be replayed again.
func (st *State) emit(fx []effect, final bool, cfg Config, now Stamp, out *Output) {
	for _, f := range fx {
		if f.typ == haentities.EventAchievementUnlocked && final {
			out.Unlocked = append(out.Unlocked, f.ach) // for the log, once; announced below
		}
		switch {
		case f.typ == haentities.EventSessionEnd:
			if final {
				out.Logged = append(out.Logged, f.sess)
			}
		case f.typ == haentities.EventSessionStart && (f.ignored || f.deferred && !final):
			// a screensaver launch, or held until the launch is final
		case !out.publish:
			// Record: a replay derives tentative events again; final ones wait for the next Apply.
			if final && !st.sent(f.typ, markKey(f.typ, f.sess, f.ach), f.at, cfg) {
				st.Pending = append(st.Pending, Pending{Type: f.typ, At: f.at, Session: f.sess, Achievement: f.ach})
				if len(st.Pending) > maxPending {
					st.Pending = st.Pending[len(st.Pending)-maxPending:]
				}
			}
		default:
			st.send(Pending{Type: f.typ, At: f.at, Session: f.sess, Achievement: f.ach}, cfg, now, out)
		}
	}
}

// flushPending emits what Record calls left for a publisher, oldest first.
func (st *State) flushPending(cfg Config, now Stamp, out *Output) {
	pending := st.Pending
	st.Pending = nil
	for _, p := range pending {
		st.send(p, cfg, now, out)
	}
}

// send emits a time-sensitive event unless it was sent already, and remembers it.
func (st *State) send(p Pending, cfg Config, now Stamp, out *Output) {
	key := markKey(p.Type, p.Session, p.Achievement)
	if st.sent(p.Type, key, p.At, cfg) {
		return
	}
	st.Sent = append(st.Sent, Mark{Type: p.Type, At: p.At, Key: key})
	age := since(p.At, now)
	if age < 0 {
		age = 0
	}
	out.Events = append(out.Events, TimedEvent{Type: p.Type, At: p.At.At, Age: age, Session: p.Session, Achievement: p.Achievement})
}

// sent reports whether an event of this type (and, for session events, of this session) was
// emitted (or is pending) within the duplicate window of at: the same event derived again, or
// reported twice (quit reboot + reboot). Another launch a few seconds later (the player quit the
// wrong game and started the right one, or the same one again) is a new event.
func (st *State) sent(typ, key string, at Stamp, cfg Config) bool {
	near := func(t, k string, a Stamp) bool {
		if t != typ || (k != "" && key != "" && k != key) {
			return false
		}
		d := since(a, at)
		if d < 0 {
			d = -d
		}
		return d <= cfg.DuplicateWindow
	}
	for _, m := range st.Sent {
		if near(m.Type, m.Key, m.At) {
			return true
		}
	}
	for _, p := range st.Pending {
		if near(p.Type, markKey(p.Type, p.Session, p.Achievement), p.At) {
			return true
		}
	}
	return false
}

// markKey tells session events apart by session: the session id (session
// events are emitted only once final, so a session keeps one id), "" for
// cabinet events, which have no session. Unlocks are told apart by
// achievement id (a replay may still change the session's id).
func markKey(typ string, sess haentities.Session, ach haentities.Achievement) string {
	switch typ {
	case haentities.EventSessionStart, haentities.EventSessionEnd:
		return sess.ID
	case haentities.EventAchievementUnlocked:
		return "ach:" + strconv.FormatUint(uint64(ach.ID), 10)
	}
	return ""
}

// pruneMarks forgets marks no replay can match any more (older than the final horizon by more than
// the duplicate window), and keeps at most maxMarks.
func (st *State) pruneMarks(cfg Config) {
	keep := st.Sent[:0]
	for _, m := range st.Sent {
		if st.Horizon.At.IsZero() || st.compareTime(m.At, st.Horizon) >= 0 || since(m.At, st.Horizon) <= cfg.DuplicateWindow {
			keep = append(keep, m)
		}
	}
	if len(keep) > maxMarks {
		keep = keep[len(keep)-maxMarks:]
	}
	st.Sent = keep
}
