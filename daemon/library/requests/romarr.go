package requests

import (
	"context"
	"fmt"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
)

// view is what one pass has read of the servers, so that ten due requests cost one read of
// ROMarr's queue and history and one of RomM's platforms.
type view struct {
	f    *Follower
	pass *Pass

	romarrRead bool
	romarrErr  error
	queue      []romarr.QueueItem // newest first
	history    []romarr.Event     // newest first
	wanted     map[string]wantedList

	platsRead bool
	platsErr  error
	plats     []romm.Platform
}

type wantedList struct {
	items []romarr.Wanted
	err   error
}

// said is ROMarr's word on one request: a state of the request and why.
type said struct {
	state, detail, release string
}

func (v *view) readROMarr(ctx context.Context) error {
	if v.romarrRead {
		return v.romarrErr
	}
	v.romarrRead = true
	v.queue, v.romarrErr = v.f.ROMarr.Queue(ctx)
	if v.romarrErr == nil {
		v.history, v.romarrErr = v.f.ROMarr.History(ctx, historyDepth)
	}
	if v.romarrErr != nil && ctx.Err() == nil {
		v.pass.ROMarrErr = v.romarrErr
	}
	return v.romarrErr
}

// onWanted finds the request on ROMarr's wanted list (read once per platform and pass).
func (v *view) onWanted(ctx context.Context, r *Request) (*romarr.Wanted, error) {
	if v.wanted == nil {
		v.wanted = map[string]wantedList{}
	}
	key := strings.ToLower(r.Platform)
	w, ok := v.wanted[key]
	if !ok {
		w.items, w.err = v.f.ROMarr.Wanted(ctx, r.Platform, romarr.MaxLimit)
		if w.err != nil && ctx.Err() == nil {
			v.pass.ROMarrErr = w.err
		}
		v.wanted[key] = w
	}
	if w.err != nil {
		return nil, w.err
	}
	for i := range w.items {
		if sameGame(w.items[i].Title, r.Game) {
			return &w.items[i], nil
		}
	}
	return nil, nil
}

// romarrSays reads where ROMarr has the request: its newest queue row (ROMarr keeps the queue
// in memory), else its newest grab or failure in the history (kept across restarts), an import
// of the release since, and the wanted list. A request naming a platform ROMarr knows by
// another slug (a name or alias ROMarr resolved) takes ROMarr's slug from the first row that
// names the game. An empty state: ROMarr lists it nowhere.
func (v *view) romarrSays(ctx context.Context, r *Request) (said, error) {
	if err := v.readROMarr(ctx); err != nil {
		return said{}, err
	}
	q := v.queueRow(r)
	ev, evAt := v.lastEvent(r)
	release := r.Release
	switch {
	case q != nil && q.Release != "":
		release = q.Release
	case q == nil && ev != nil && ev.Release != "":
		release = ev.Release
	}
	state, detail := "", ""
	switch {
	case q != nil:
		state, detail = q.State, q.Detail
	case ev != nil:
		state, detail = ev.Kind, ev.Detail
	}
	if imp := v.importOf(r, release, evAt); imp != nil && state != "imported" {
		state, detail = "imported", imp.Detail
	}
	name := release
	if name == "" {
		name = "a release"
	}
	switch state {
	case "queued":
		return said{StateSearching, "ROMarr has queued it.", release}, nil
	case "grabbed":
		return said{StateDownloading, fmt.Sprintf("ROMarr handed %s to its download client.", name), release}, nil
	case "imported":
		return said{StateImporting, fmt.Sprintf("ROMarr imported %s into its library; waiting for RomM to list it.", name), release}, nil
	case "import-failed":
		why := v.failureOf(release)
		if why == "" {
			why = "see ROMarr's history"
		}
		return said{StateFailed, fmt.Sprintf("ROMarr downloaded %s but could not import it (%s): retry the import in ROMarr; Cabinet keeps watching.",
			name, why), release}, nil
	case "failed":
		w, err := v.onWanted(ctx, r)
		switch {
		case err != nil || w != nil:
			return said{StateSearching, noReleaseYet(detail, w), release}, nil
		default:
			return said{StateFailed, fmt.Sprintf("ROMarr could not get it (%s) and no longer has it on its wanted list: ask for it again with library_request.",
				orUnknown(detail)), release}, nil
		}
	case "":
		w, err := v.onWanted(ctx, r)
		if err != nil || w == nil {
			return said{}, nil
		}
		return said{StateSearching, noReleaseYet(w.LastError, w), release}, nil
	}
	return said{r.State, fmt.Sprintf("ROMarr says %s: %s", state, orUnknown(detail)), release}, nil
}

func noReleaseYet(why string, w *romarr.Wanted) string {
	s := "ROMarr has found no usable release yet"
	if why != "" {
		s += " (" + why + ")"
	}
	s += "; it searches again on its own schedule"
	if w != nil && w.Attempts > 0 {
		s += fmt.Sprintf(" (%d search(es) so far)", w.Attempts)
	}
	return s + "."
}

func orUnknown(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

// queueRow is the newest queue row of the request's game and platform.
func (v *view) queueRow(r *Request) *romarr.QueueItem {
	var loose *romarr.QueueItem
	for i := range v.queue {
		q := &v.queue[i]
		if !sameGame(q.Title, r.Game) {
			continue
		}
		if strings.EqualFold(q.Platform, r.Platform) {
			return q
		}
		if loose == nil {
			loose = q
		}
	}
	if loose != nil && adopt(r, loose.Platform) {
		return loose
	}
	return nil
}

// lastEvent is the newest grab or failure of the request's game in the history, and its
// position (newer events come first); -1 when there is none.
func (v *view) lastEvent(r *Request) (*romarr.Event, int) {
	loose, looseAt := (*romarr.Event)(nil), -1
	for i := range v.history {
		e := &v.history[i]
		if (e.Kind != "grabbed" && e.Kind != "failed") || !sameGame(e.Title, r.Game) {
			continue
		}
		if strings.EqualFold(e.Platform, r.Platform) {
			return e, i
		}
		if loose == nil {
			loose, looseAt = e, i
		}
	}
	if loose != nil && adopt(r, loose.Platform) {
		return loose, looseAt
	}
	return nil, -1
}

// adopt takes ROMarr's slug for a request that named its platform otherwise: only when the
// request named no Batocera system (whose slug Cabinet sent itself).
func adopt(r *Request, slug string) bool {
	if r.System != "" || slug == "" {
		return false
	}
	r.Platform = slug
	return true
}

// importOf is an import of the request's release (or, newer than its last grab at position
// before, of a download named after the game): ROMarr names an import by the download.
func (v *view) importOf(r *Request, release string, before int) *romarr.Event {
	for i := range v.history {
		e := &v.history[i]
		if e.Kind != "imported" || !strings.EqualFold(e.Platform, r.Platform) {
			continue
		}
		if release != "" && (strings.EqualFold(e.Release, release) || strings.EqualFold(e.Title, release)) {
			return e
		}
		if before >= 0 && i < before && strings.Contains(" "+key(e.Title)+" ", " "+key(r.Game)+" ") {
			return e
		}
	}
	return nil
}

// failureOf is ROMarr's reason for the newest failure about the release (an import that failed
// is recorded under the download's name).
func (v *view) failureOf(release string) string {
	if release == "" {
		return ""
	}
	for _, e := range v.history {
		if e.Kind == "failed" && (strings.EqualFold(e.Title, release) || strings.EqualFold(e.Release, release)) {
			return e.Detail
		}
	}
	return ""
}
