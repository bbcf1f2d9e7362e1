package tracker

import (
	"cmp"
	"slices"
	"time"
)

// since is the time from a to b: on the boot clock when both come from the same boot (it survives
// suspend and never jumps), else on the wall clock.
func since(a, b Stamp) time.Duration {
	if a.BootID != "" && a.BootID == b.BootID {
		return b.Boot - a.Boot
	}
	return b.At.Sub(a.At)
}

// within reports whether b comes at most w after a (and not before it). A zero a is never within.
func within(a, b Stamp, w time.Duration) bool {
	if a.At.IsZero() {
		return false
	}
	d := since(a, b)
	return d >= 0 && d <= w
}

// bootIndex is the position of id in the known boots, -1 when unknown.
func (st *State) bootIndex(id string) int {
	if id == "" {
		return -1
	}
	return slices.Index(st.Boots, id)
}

// noteBoot records a boot id the first time it is seen: a boot id never seen before is the newest boot.
func (st *State) noteBoot(id string) {
	if id == "" || slices.Contains(st.Boots, id) {
		return
	}
	st.Boots = append(st.Boots, id)
	if len(st.Boots) > maxBoots {
		st.Boots = slices.Delete(st.Boots, 0, len(st.Boots)-maxBoots)
	}
}

// compareTime orders two moments: by boot order across known boots, by the boot clock within a boot,
// by the wall clock otherwise.
func (st *State) compareTime(a, b Stamp) int {
	if a.BootID != b.BootID {
		ia, ib := st.bootIndex(a.BootID), st.bootIndex(b.BootID)
		if ia >= 0 && ib >= 0 {
			return cmp.Compare(ia, ib)
		}
		return a.At.Compare(b.At)
	}
	if a.BootID != "" {
		return cmp.Compare(a.Boot, b.Boot)
	}
	return a.At.Compare(b.At)
}

// compareEvents is a total order on events: time first, then a tie-break on content, so events
// stamped alike are applied in the same order whatever order they arrived in. It returns 0 only for
// identical events.
func (st *State) compareEvents(a, b Event) int {
	if c := st.compareTime(a.Stamp(), b.Stamp()); c != 0 {
		return c
	}
	if c := cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Source, b.Source); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Unlock.ID, b.Unlock.ID); c != 0 {
		return c // two unlocks of one frame, in id order
	}
	for _, p := range [][2]string{
		{a.Path, b.Path}, {a.Name, b.Name}, {a.Stem, b.Stem}, {a.System, b.System}, {a.SystemName, b.SystemName},
		{a.Emulator, b.Emulator}, {a.Core, b.Core}, {a.Arg, b.Arg}, {a.BootID, b.BootID},
		{a.Unlock.Title, b.Unlock.Title}, {a.Unlock.Description, b.Unlock.Description},
	} {
		if c := cmp.Compare(p[0], p[1]); c != 0 {
			return c
		}
	}
	if a.Unlock.Hardcore != b.Unlock.Hardcore {
		if a.Unlock.Hardcore {
			return 1
		}
		return -1
	}
	if c := a.At.Compare(b.At); c != 0 {
		return c
	}
	return cmp.Compare(a.Boot, b.Boot)
}

// insert puts ev into the window in event order; an identical event already there (a retried hook,
// a spool file ingested twice) is dropped.
func (st *State) insert(ev Event) {
	i, found := slices.BinarySearchFunc(st.Window, ev, st.compareEvents)
	if found {
		return
	}
	st.Window = slices.Insert(st.Window, i, ev)
}

// late reports whether ev is older than the newest final event: it can no longer be put in order.
func (st *State) late(ev Event) bool {
	return !st.Horizon.At.IsZero() && st.compareTime(ev.Stamp(), st.Horizon) < 0
}

// foldable reports whether no event that could still arrive belongs before e: now is at least the
// reorder window after it (or in a later boot).
func (st *State) foldable(e, now Stamp, w time.Duration) bool {
	if now.At.IsZero() {
		return false
	}
	if e.BootID != now.BootID && e.BootID != "" && now.BootID != "" {
		ie, in := st.bootIndex(e.BootID), st.bootIndex(now.BootID)
		if ie >= 0 && in >= 0 {
			return ie < in
		}
	}
	return since(e, now) >= w
}
