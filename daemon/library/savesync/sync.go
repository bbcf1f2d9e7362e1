package savesync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Remote is what the sync uses of RomM (a *romm.Client).
type Remote interface {
	NegotiateSync(ctx context.Context, deviceID string, saves []romm.ClientSave, romIDs []int) (romm.Negotiation, error)
	UploadSave(ctx context.Context, u romm.SaveUpload) (romm.Save, error)
	DownloadSave(ctx context.Context, id int, deviceID string, sessionID int, dst io.Writer, max int64) (int64, error)
	ConfirmSaveDownloaded(ctx context.Context, id int, deviceID string) error
	CompleteSync(ctx context.Context, sessionID, completed, failed int) error
	Saves(ctx context.Context, romID int, slot string) ([]romm.Save, error)
}

// Syncer syncs the saves of the cabinet's games with RomM. One pass at a time (Sync and
// Resolve take turns).
type Syncer struct {
	Remote   Remote
	DeviceID string
	Kept     Kept
	Layout   Layout
	Backups  Backups
	// States syncs the auto state too (cabinet.romm.sync_states).
	States bool
	// Running is the ROM path of the game running now, "" when none: its files are never
	// touched.
	Running func() string
	// AutoLoads reports whether Batocera loads a state when the game starts (its autosave
	// setting), which hides a downloaded battery save.
	AutoLoads func(system, rom string) bool
	Now       func() time.Time
	Log       zerolog.Logger

	mu sync.Mutex
}

// Item is what a pass did with one save.
type Item struct {
	Game   Game   `json:"game"`
	Slot   string `json:"slot"`
	Action string `json:"action"` // uploaded, downloaded, conflict, in_step, skipped, error
	Detail string `json:"detail,omitempty"`
	Backup string `json:"backup,omitempty"`
	// Hidden names the state Batocera loads at launch, which hides a downloaded save.
	Hidden string `json:"hidden,omitempty"`
}

// Item actions.
const (
	Uploaded   = "uploaded"
	Downloaded = "downloaded"
	Conflicted = "conflict"
	InStep     = "in_step"
	Skipped    = "skipped"
	Failed     = "error"
)

// Result is one pass.
type Result struct {
	Session int    `json:"session"`
	Items   []Item `json:"items"`
}

// Count is how many items had action a.
func (r Result) Count(a string) int {
	n := 0
	for _, it := range r.Items {
		if it.Action == a {
			n++
		}
	}
	return n
}

// Sync syncs the saves of games with RomM in one sync session: it tells RomM what the cabinet
// has, then uploads, downloads and keeps conflicts as the answer and Cabinet's own records
// say. trigger names the occasion in the history. An error is RomM's as a whole (unreachable,
// refusing the token): nothing was changed and the pass is to be tried again later; what
// happened to each save is in the Result.
func (s *Syncer) Sync(ctx context.Context, trigger string, gs []Game) (Result, error) {
	return s.SyncProgress(ctx, trigger, gs, nil)
}

// SyncProgress is Sync telling progress, when set, how many saves of the pass are done.
func (s *Syncer) SyncProgress(ctx context.Context, trigger string, gs []Game, progress func(done, total int)) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &pass{s: s, byKey: map[string]*slotState{}}
	for _, g := range gs {
		if err := g.check(); err != nil {
			continue
		}
		if s.running(g) {
			continue // its files are the emulator's now
		}
		for _, k := range s.kinds() {
			if _, dup := p.byKey[key(g.ROMID, k.Slot)]; dup {
				continue // two paths of one RomM game: the first is synced
			}
			st := &slotState{game: g, kind: k, path: s.Layout.Path(g, k)}
			p.byKey[key(g.ROMID, k.Slot)] = st
			p.order = append(p.order, st)
		}
	}
	if len(p.order) == 0 {
		return Result{}, nil
	}
	if err := p.read(); err != nil {
		return Result{}, err
	}
	neg, err := s.Remote.NegotiateSync(ctx, s.DeviceID, p.clientSaves(), p.romIDs())
	if err != nil {
		s.noteError(err)
		return Result{}, err
	}
	res := Result{Session: neg.SessionID}
	for _, op := range neg.Ops {
		if st := p.byKey[key(op.ROMID, op.Slot)]; st != nil && st.op == nil {
			op := op
			st.op = &op
		} // else: another game of the user's library, or a slot Cabinet does not sync
	}
	completed, failed := 0, 0
	for i, st := range p.order {
		if ctx.Err() != nil {
			break
		}
		it := p.apply(ctx, neg.SessionID, st)
		if it.Action != "" {
			res.Items = append(res.Items, it)
		}
		switch it.Action {
		case Uploaded, Downloaded:
			completed++
		case Failed:
			failed++
		}
		if progress != nil {
			progress(i+1, len(p.order))
		}
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	cerr := s.Remote.CompleteSync(cctx, neg.SessionID, completed, failed)
	cancel()
	if cerr != nil {
		s.Log.Debug().Err(cerr).Int("session", neg.SessionID).Msg("RomM's sync session not closed; RomM closes it with the next")
	}
	s.record(trigger, len(gs), res)
	return res, ctx.Err()
}

func (s *Syncer) kinds() []Kind {
	if s.States {
		return []Kind{Battery, AutoState}
	}
	return []Kind{Battery}
}

func (s *Syncer) running(g Game) bool {
	return s.Running != nil && g.ROM != "" && s.Running() == g.ROM
}

func (s *Syncer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// pass is one Sync.
type pass struct {
	s     *Syncer
	order []*slotState
	byKey map[string]*slotState
}

// slotState is one (game, slot) in a pass.
type slotState struct {
	game  Game
	kind  Kind
	path  string
	local Local
	has   bool // a local file
	bad   error
	kept  Synced
	known bool // a sync is recorded
	op    *romm.SyncOp
}

func (p *pass) read() error {
	dirs := map[string]bool{}
	for _, st := range p.order {
		if dir := filepath.Dir(st.path); !dirs[dir] {
			dirs[dir] = true
			removeTemps(dir)
		}
		st.local, st.has, st.bad = ReadLocal(st.path)
		var err error
		st.kept, st.known, err = p.s.Kept.Synced(st.game.ROMID, st.kind.Slot)
		if err != nil {
			return fmt.Errorf("read what was last synced: %w", err)
		}
	}
	return nil
}

func (p *pass) clientSaves() []romm.ClientSave {
	var out []romm.ClientSave
	for _, st := range p.order {
		if !st.has {
			continue
		}
		out = append(out, romm.ClientSave{ROMID: st.game.ROMID, FileName: filepath.Base(st.path), Slot: st.kind.Slot,
			Emulator: emulator(st.game), ContentHash: st.local.Hash, UpdatedAt: st.local.ModTime.UTC(), Size: st.local.Size})
	}
	return out
}

// emulator is RomM's emulator field for a game's saves: the RetroArch core that writes them.
func emulator(g Game) string {
	if g.Core != "" {
		return "retroarch-" + g.Core
	}
	return "retroarch"
}

func (p *pass) romIDs() []int {
	seen := map[int]bool{}
	var out []int
	for _, st := range p.order {
		if !seen[st.game.ROMID] {
			seen[st.game.ROMID] = true
			out = append(out, st.game.ROMID)
		}
	}
	sort.Ints(out)
	if len(out) > 500 {
		return nil // RomM takes 500; without the list it offers the whole library, which is filtered here
	}
	return out
}

// apply carries out RomM's answer for one save, with Cabinet's own rule on top: a save changed
// here since the last sync (or never synced) and a different save on RomM is a conflict, even
// where RomM answers download (RomM compares one save record; another device's upload is a new
// one).
func (p *pass) apply(ctx context.Context, session int, st *slotState) Item {
	s := p.s
	it := Item{Game: st.game, Slot: st.kind.Slot}
	fail := func(err error) Item {
		it.Action, it.Detail = Failed, clean(err.Error(), 300)
		return it
	}
	if st.bad != nil {
		return fail(st.bad)
	}
	if st.op == nil {
		if c, waiting, _ := s.Kept.Conflict(st.game.ROMID, st.kind.Slot); waiting {
			it.Action, it.Detail, it.Hidden = Conflicted, "waiting for your choice: "+c.Reason, c.HiddenBy
			return it
		}
		return Item{} // nothing on either side, or RomM has nothing new for a save this cabinet deleted
	}
	op := *st.op
	if c, waiting, _ := s.Kept.Conflict(st.game.ROMID, st.kind.Slot); waiting {
		// Nothing moves until the household chooses; a newer save on either side refreshes it.
		if (op.Action == romm.SyncDownload || op.Action == romm.SyncConflict) && op.SaveID > 0 && checkServerName(op.FileName, st.kind) == nil {
			return p.conflict(ctx, session, st, op.SaveID, op.FileName, op.ServerHash, op.ServerUpdatedAt, "", c.Reason)
		}
		it.Action, it.Detail, it.Hidden = Conflicted, "waiting for your choice: "+c.Reason, c.HiddenBy
		return it
	}
	changedHere := st.has && (!st.known || st.local.Hash != st.kept.Hash)
	switch op.Action {
	case romm.SyncNoOp:
		if st.has && op.ServerHash == st.local.Hash && (!st.known || st.kept.Hash != st.local.Hash) {
			s.keepSynced(st, op.SaveID, op.ServerUpdatedAt, "same")
		}
		return Item{}
	case romm.SyncUpload:
		if !st.has {
			return Item{}
		}
		return p.upload(ctx, session, st, false)
	case romm.SyncDownload, romm.SyncConflict:
		if err := checkServerName(op.FileName, st.kind); err != nil {
			return fail(err)
		}
		if op.SaveID <= 0 {
			return fail(errors.New("RomM offered a save without its id"))
		}
		if st.has && op.ServerHash != "" && op.ServerHash == st.local.Hash {
			s.keepSynced(st, op.SaveID, op.ServerUpdatedAt, "same")
			if err := s.Remote.ConfirmSaveDownloaded(ctx, op.SaveID, s.DeviceID); err != nil {
				s.Log.Debug().Err(err).Msg("RomM not told the cabinet has its save")
			}
			return Item{Game: st.game, Slot: st.kind.Slot, Action: InStep, Detail: "the same bytes on both sides"}
		}
		if op.Action == romm.SyncConflict || changedHere {
			reason := "changed on the cabinet since the last sync, and RomM has a different save (" + clean(op.Reason, 120) + ")"
			if !st.known {
				reason = "the cabinet's save was never synced and RomM has a different one (" + clean(op.Reason, 120) + ")"
			}
			if op.Action == romm.SyncConflict {
				reason = "changed on both sides since the last sync"
			}
			return p.conflict(ctx, session, st, op.SaveID, op.FileName, op.ServerHash, op.ServerUpdatedAt, "", reason)
		}
		return p.download(ctx, session, st, op)
	}
	return fail(fmt.Errorf("RomM answered %q, which the cabinet does not know", clean(op.Action, 20)))
}

// upload sends the local save. RomM refuses (409) when its slot holds a save this device has not
// synced: that is another device's newer save, so either it is downloaded (the local file is the
// one last synced) or both are kept as a conflict.
func (p *pass) upload(ctx context.Context, session int, st *slotState, overwrite bool) Item {
	s := p.s
	it := Item{Game: st.game, Slot: st.kind.Slot}
	data, err := readSmall(st.path)
	if err != nil {
		it.Action, it.Detail = Failed, clean(err.Error(), 300)
		return it
	}
	if sumOf(data) != st.local.Hash {
		it.Action, it.Detail = Skipped, "the save changed while it was read; it goes with the next sync"
		return it
	}
	sv, err := s.Remote.UploadSave(ctx, romm.SaveUpload{ROMID: st.game.ROMID, Emulator: emulator(st.game), Slot: st.kind.Slot,
		DeviceID: s.DeviceID, SessionID: session, Overwrite: overwrite, FileName: filepath.Base(st.path), Content: data})
	if errors.Is(err, romm.ErrSaveConflict) && !overwrite {
		return p.afterRefusedUpload(ctx, session, st)
	}
	if err != nil {
		it.Action, it.Detail = Failed, "upload: "+clean(err.Error(), 300)
		return it
	}
	hash := st.local.Hash
	s.keepSynced(st, sv.ID, sv.UpdatedAt, Uploaded)
	// RomM compares the file's time with its own upload time at the next negotiation: the two
	// clocks agree from now on (grout does the same).
	if !sv.UpdatedAt.IsZero() && !s.running(st.game) {
		if cur, ok, _ := ReadLocal(st.path); ok && cur.Hash == hash {
			os.Chtimes(st.path, sv.UpdatedAt, sv.UpdatedAt)
		}
	}
	it.Action, it.Detail = Uploaded, fmt.Sprintf("%d bytes", len(data))
	return it
}

func (p *pass) afterRefusedUpload(ctx context.Context, session int, st *slotState) Item {
	s := p.s
	it := Item{Game: st.game, Slot: st.kind.Slot}
	list, err := s.Remote.Saves(ctx, st.game.ROMID, st.kind.Slot)
	if err != nil {
		it.Action, it.Detail = Failed, "RomM refused the upload (a newer save is there) and its saves cannot be listed: "+clean(err.Error(), 200)
		return it
	}
	newest, ok := newestSave(list, st.kind.Slot)
	if !ok {
		it.Action, it.Detail = Failed, "RomM refused the upload as older than its own save, but lists none: retry later"
		return it
	}
	if err := checkServerName(newest.FileName, st.kind); err != nil {
		it.Action, it.Detail = Failed, clean(err.Error(), 300)
		return it
	}
	if st.known && st.local.Hash == st.kept.Hash {
		op := romm.SyncOp{Action: romm.SyncDownload, ROMID: st.game.ROMID, SaveID: newest.ID, FileName: newest.FileName,
			Slot: st.kind.Slot, ServerHash: newest.ContentHash, ServerUpdatedAt: newest.UpdatedAt}
		return p.download(ctx, session, st, op)
	}
	return p.conflict(ctx, session, st, newest.ID, newest.FileName, newest.ContentHash, newest.UpdatedAt, newest.OriginDevice,
		"changed on the cabinet, and another device uploaded a newer save to RomM")
}

func newestSave(list []romm.Save, slot string) (romm.Save, bool) {
	var best romm.Save
	ok := false
	for _, sv := range list {
		if sv.Slot == slot && (!ok || sv.UpdatedAt.After(best.UpdatedAt)) {
			best, ok = sv, true
		}
	}
	return best, ok
}

// download puts RomM's save in place of the local one: into a temp file beside it, checked
// against RomM's content_hash, the local file backed up (the download is abandoned if that
// fails), renamed over it, and RomM told.
func (p *pass) download(ctx context.Context, session int, st *slotState, op romm.SyncOp) Item {
	s := p.s
	it := Item{Game: st.game, Slot: st.kind.Slot}
	want := ""
	switch {
	case validHash(op.ServerHash):
		want = op.ServerHash
	case op.ServerHash != "":
		it.Action, it.Detail = Failed, fmt.Sprintf("RomM's content_hash %q is not an md5: the save is not downloaded", clean(op.ServerHash, 70))
		return it
	}
	backup := ""
	ready := func() error {
		if s.running(st.game) {
			return errors.New("the game started: its save is left to the emulator and synced after it")
		}
		cur, ok, err := ReadLocal(st.path)
		if err != nil {
			return err
		}
		if ok != st.has || (ok && cur.Hash != st.local.Hash) {
			return errors.New("the save changed while RomM's was downloaded: it is synced again next time")
		}
		if ok {
			b, err := s.Backups.Backup(st.game.System, st.path, s.now())
			if err != nil {
				return err
			}
			backup = b
		}
		return nil
	}
	_, err := s.fetch(ctx, op.SaveID, session, st.path, want, ready)
	if err != nil {
		it.Action, it.Detail = Failed, "download: "+clean(err.Error(), 300)+" (the save on the cabinet is as it was)"
		return it
	}
	if !op.ServerUpdatedAt.IsZero() {
		os.Chtimes(st.path, op.ServerUpdatedAt, op.ServerUpdatedAt)
	}
	hash := want
	if hash == "" {
		if l, ok, _ := ReadLocal(st.path); ok {
			hash = l.Hash
		}
	}
	st.local.Hash = hash
	s.keepSynced(st, op.SaveID, op.ServerUpdatedAt, Downloaded)
	if err := s.Remote.ConfirmSaveDownloaded(ctx, op.SaveID, s.DeviceID); err != nil {
		s.Log.Warn().Err(err).Int("save", op.SaveID).Msg("RomM not told the save was downloaded; it may offer it again")
	}
	it.Action, it.Backup = Downloaded, backup
	it.Detail = "RomM's save is in place"
	if backup != "" {
		it.Detail += "; the cabinet's is in " + backup
	}
	if st.kind.Slot == Battery.Slot {
		it.Hidden = s.hiddenBy(st.game)
	}
	return it
}

// fetch downloads RomM's save id into path the safe way (writeSynced: want and ready as there)
// and returns the bytes' md5. The download streams into the temp file: nothing is held in memory.
func (s *Syncer) fetch(ctx context.Context, id, session int, path, want string, ready func() error) (string, error) {
	r, w := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		_, err := s.Remote.DownloadSave(ctx, id, s.DeviceID, session, w, MaxSaveBytes)
		w.CloseWithError(err)
		errc <- err
	}()
	_, sum, err := writeSynced(path, r, MaxSaveBytes, want, ready)
	r.CloseWithError(errors.New("abandoned"))
	if derr := <-errc; err == nil {
		err = derr // writeSynced's own error, when it has one, says more (a full disk)
	}
	return sum, err
}

// hiddenBy names the state Batocera loads when the game starts, which takes over from the
// battery save, "" when none would.
func (s *Syncer) hiddenBy(g Game) string {
	if s.AutoLoads == nil || !s.AutoLoads(g.System, g.ROM) {
		return ""
	}
	p := s.Layout.Path(g, AutoState)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// conflict keeps the local save in place and RomM's beside the backups, and records it for the
// household.
func (p *pass) conflict(ctx context.Context, session int, st *slotState, saveID int, file, hash string, at time.Time, from, reason string) Item {
	s := p.s
	it := Item{Game: st.game, Slot: st.kind.Slot}
	if old, ok, _ := s.Kept.Conflict(st.game.ROMID, st.kind.Slot); ok && old.SaveID == saveID && old.LocalHash == st.local.Hash {
		if _, err := os.Stat(old.Copy); err == nil {
			it.Action, it.Detail, it.Hidden = Conflicted, "still waiting: "+old.Reason, old.HiddenBy
			return it // already kept and told
		}
	}
	want := ""
	if validHash(hash) {
		want = hash
	}
	dst := s.Backups.RomMCopy(st.game.System, filepath.Base(st.path), s.now())
	sum, err := s.fetch(ctx, saveID, session, dst, want, nil)
	if err != nil {
		it.Action, it.Detail = Failed, "a conflict: RomM's save could not be kept beside the cabinet's ("+clean(err.Error(), 200)+"); the cabinet's save is as it was"
		return it
	}
	c := Conflict{Game: st.game, Slot: st.kind.Slot, Local: st.path, LocalHash: st.local.Hash, LocalAt: st.local.ModTime,
		SaveID: saveID, RomMFile: clean(file, 120), RomMHash: sum, RomMAt: at, RomMFrom: clean(from, 60), Copy: dst,
		Reason: reason, Found: s.now()}
	if st.kind.Slot == Battery.Slot {
		c.HiddenBy = s.hiddenBy(st.game)
	}
	old, replaces, _ := s.Kept.Conflict(st.game.ROMID, st.kind.Slot)
	if err := s.Kept.putConflict(c); err != nil {
		os.Remove(dst)
		it.Action, it.Detail = Failed, "a conflict could not be recorded: "+clean(err.Error(), 200)
		return it
	}
	if replaces && old.Copy != dst {
		os.Remove(old.Copy) // RomM's side of the conflict this one replaces
	}
	it.Action, it.Detail, it.Backup, it.Hidden = Conflicted, reason, dst, c.HiddenBy
	return it
}

func (s *Syncer) keepSynced(st *slotState, saveID int, at time.Time, way string) {
	rec := Synced{ROMID: st.game.ROMID, Slot: st.kind.Slot, System: st.game.System, ROM: st.game.ROM, Hash: st.local.Hash,
		SaveID: saveID, ServerUpdatedAt: at, At: s.now(), Way: way}
	if err := s.Kept.putSynced(rec); err != nil {
		s.Log.Error().Err(err).Msg("what was synced is not recorded; the next sync may see a conflict")
	}
}

func (s *Syncer) noteError(err error) {
	day := s.now().Format("2006-01-02")
	_ = s.Kept.note(day, func(j *Journal) { j.LastError = clean(err.Error(), 300) })
}

func (s *Syncer) record(trigger string, nGames int, res Result) {
	now := s.now()
	day := now.Format("2006-01-02")
	err := s.Kept.note(day, func(j *Journal) {
		j.LastSync, j.LastError = now, ""
		j.Uploads += res.Count(Uploaded)
		j.Downloads += res.Count(Downloaded)
		j.LastSession = LastSession{ID: res.Session, At: now, Trigger: trigger, Games: nGames, Uploaded: res.Count(Uploaded),
			Download: res.Count(Downloaded), Conflicts: res.Count(Conflicted), Failed: res.Count(Failed), NoOp: res.Count(InStep)}
		for _, it := range res.Items {
			if it.Action == InStep || it.Action == Skipped {
				continue
			}
			j.History = append(j.History, Entry{At: now, Game: clean(it.Game.Title(), 100), System: it.Game.System, ROMID: it.Game.ROMID,
				Slot: it.Slot, Action: it.Action, Detail: it.Detail, Backup: it.Backup, Hidden: it.Hidden})
		}
		if n := res.Count(Failed); n > 0 {
			for _, it := range res.Items {
				if it.Action == Failed {
					j.LastError = clean(it.Game.Title()+": "+it.Detail, 300)
					break
				}
			}
		}
	})
	if err != nil {
		s.Log.Warn().Err(err).Msg("save sync history not recorded")
	}
}

func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the save %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSaveBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the save %s: %w", path, err)
	}
	if len(b) > MaxSaveBytes {
		return nil, fmt.Errorf("the save %s is %w", path, ErrTooLarge)
	}
	return b, nil
}

func clean(s string, n int) string { return untrusted.Clean(s, n) }
