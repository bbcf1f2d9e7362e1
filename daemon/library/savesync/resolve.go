package savesync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
)

// Sides of a conflict the household keeps.
const (
	KeepLocal = "local"
	KeepRomM  = "romm"
)

// ErrNoConflict: no conflict waits for that game and slot.
var ErrNoConflict = errors.New("no conflict waits for that save")

// Resolve settles the conflict of (game, slot) the household's way, keeping the other side as
// a backup: keep "local" uploads the cabinet's save as the newest in RomM (RomM's stays in
// RomM's history, and its copy here joins the backups); keep "romm" backs up the cabinet's
// save and puts RomM's in its place.
func (s *Syncer) Resolve(ctx context.Context, romID int, slot, keep string) (Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok, err := s.Kept.Conflict(romID, slot)
	if err != nil {
		return Item{}, fmt.Errorf("read the conflicts: %w", err)
	}
	if !ok {
		return Item{}, ErrNoConflict
	}
	k, ok := KindOf(slot)
	if !ok {
		return Item{}, fmt.Errorf("slot %q is not one Cabinet syncs", clean(slot, 40))
	}
	if s.running(c.Game) {
		return Item{}, errors.New("the game is running: its save is the emulator's until it ends; resolve the conflict after")
	}
	st := &slotState{game: c.Game, kind: k, path: s.Layout.Path(c.Game, k)}
	st.local, st.has, st.bad = ReadLocal(st.path)
	if st.bad != nil {
		return Item{}, st.bad
	}
	var it Item
	switch keep {
	case KeepLocal:
		it, err = s.keepLocal(ctx, c, st)
	case KeepRomM:
		it, err = s.keepRomM(ctx, c, st)
	default:
		return Item{}, fmt.Errorf("keep %q: say local or romm", clean(keep, 20))
	}
	if err != nil {
		return Item{}, err
	}
	if err := s.Kept.dropConflict(romID, slot); err != nil {
		return it, fmt.Errorf("the conflict was settled but is still listed: %w", err)
	}
	now := s.now()
	_ = s.Kept.note(now.Format("2006-01-02"), func(j *Journal) {
		j.History = append(j.History, Entry{At: now, Game: clean(c.Game.Title(), 100), System: c.Game.System, ROMID: romID,
			Slot: slot, Action: "resolved", Detail: it.Detail, Backup: it.Backup})
	})
	return it, nil
}

func (s *Syncer) keepLocal(ctx context.Context, c Conflict, st *slotState) (Item, error) {
	if !st.has {
		return Item{}, fmt.Errorf("the cabinet's save %s is gone: keep romm instead, or play the game to make one", st.path)
	}
	p := &pass{s: s}
	it := p.upload(ctx, 0, st, true)
	if it.Action != Uploaded {
		return Item{}, fmt.Errorf("upload the cabinet's save: %s", it.Detail)
	}
	// RomM's side becomes one of the backups (rotated like them).
	if b, err := os.Stat(c.Copy); err == nil && b.Mode().IsRegular() {
		dst := s.Backups.name(c.Game.System, filepath.Base(st.path), "", c.Found)
		if os.Rename(c.Copy, dst) == nil {
			it.Backup = dst
		}
	}
	it.Detail = "the cabinet's save is now the newest in RomM"
	if it.Backup != "" {
		it.Detail += "; RomM's earlier one is kept in " + it.Backup
	}
	return it, nil
}

func (s *Syncer) keepRomM(ctx context.Context, c Conflict, st *slotState) (Item, error) {
	in, err := os.Open(c.Copy)
	if err != nil {
		return Item{}, fmt.Errorf("RomM's side of the conflict (%s) is gone: run a sync again to fetch it: %w", c.Copy, err)
	}
	defer in.Close()
	backup := ""
	ready := func() error {
		if s.running(c.Game) {
			return errors.New("the game started: resolve the conflict after it ends")
		}
		if st.has {
			b, err := s.Backups.Backup(c.Game.System, st.path, s.now())
			if err != nil {
				return err
			}
			backup = b
		}
		return nil
	}
	want := ""
	if validHash(c.RomMHash) {
		want = c.RomMHash
	}
	if _, _, err := writeSynced(st.path, in, MaxSaveBytes, want, ready); err != nil {
		return Item{}, fmt.Errorf("put RomM's save in place (the cabinet's is as it was): %w", err)
	}
	if !c.RomMAt.IsZero() {
		os.Chtimes(st.path, c.RomMAt, c.RomMAt)
	}
	os.Remove(c.Copy)
	st.local.Hash = c.RomMHash
	s.keepSynced(st, c.SaveID, c.RomMAt, Downloaded)
	if err := s.Remote.ConfirmSaveDownloaded(ctx, c.SaveID, s.DeviceID); err != nil {
		s.Log.Warn().Err(err).Int("save", c.SaveID).Msg("RomM not told the save was taken; the next sync settles it")
	}
	it := Item{Game: c.Game, Slot: c.Slot, Action: Downloaded, Backup: backup, Detail: "RomM's save is in place"}
	if backup != "" {
		it.Detail += "; the cabinet's is kept in " + backup
	}
	if st.kind.Slot == Battery.Slot {
		it.Hidden = s.hiddenBy(c.Game)
	}
	return it, nil
}

// Saves is what the household sees of one game's saves: the cabinet's files, RomM's saves in
// the synced slots, what was last synced and the conflict waiting.
type Saves struct {
	Game     Game         `json:"game"`
	Local    []LocalSave  `json:"local"`
	RomM     []RemoteSave `json:"romm"`
	RomMErr  string       `json:"romm_error,omitempty"`
	Synced   []Synced     `json:"last_synced"`
	Conflict []Conflict   `json:"conflicts"`
	Backups  []Copy       `json:"backups"`
}

// LocalSave is a save file on the cabinet.
type LocalSave struct {
	Slot     string    `json:"slot"`
	Path     string    `json:"path"`
	Size     int64     `json:"size"`
	Modified time.Time `json:"modified"`
	Hash     string    `json:"hash"`
}

// RemoteSave is a save RomM holds.
type RemoteSave struct {
	ID        int       `json:"id"`
	File      string    `json:"file"`
	Slot      string    `json:"slot"`
	Size      int64     `json:"size"`
	UpdatedAt time.Time `json:"updated_at"`
	Hash      string    `json:"hash,omitempty"`
	From      string    `json:"from_device,omitempty"`
	Emulator  string    `json:"emulator,omitempty"`
}

// Describe gathers Saves for g (RomM asked with ctx's deadline; its failure is reported in
// RomMErr, the rest still answers).
func (s *Syncer) Describe(ctx context.Context, g Game) Saves {
	out := Saves{Game: g, Local: []LocalSave{}, RomM: []RemoteSave{}, Synced: []Synced{}, Conflict: []Conflict{}, Backups: []Copy{}}
	for _, k := range s.kinds() {
		p := s.Layout.Path(g, k)
		if l, ok, err := ReadLocal(p); ok && err == nil {
			out.Local = append(out.Local, LocalSave{Slot: k.Slot, Path: p, Size: l.Size, Modified: l.ModTime, Hash: l.Hash})
		}
		if sy, ok, _ := s.Kept.Synced(g.ROMID, k.Slot); ok {
			out.Synced = append(out.Synced, sy)
		}
		if c, ok, _ := s.Kept.Conflict(g.ROMID, k.Slot); ok {
			out.Conflict = append(out.Conflict, c)
		}
		for _, c := range s.Backups.listSystem(g.System) {
			if c.Save == filepath.Base(p) {
				out.Backups = append(out.Backups, c)
			}
		}
	}
	if s.Remote != nil && g.ROMID > 0 {
		list, err := s.Remote.Saves(ctx, g.ROMID, "")
		if err != nil {
			out.RomMErr = clean(err.Error(), 300)
		}
		for _, sv := range list {
			out.RomM = append(out.RomM, RemoteSave{ID: sv.ID, File: clean(sv.FileName, 120), Slot: clean(sv.Slot, 60), Size: sv.Size,
				UpdatedAt: sv.UpdatedAt, Hash: clean(sv.ContentHash, 64), From: clean(sv.OriginDevice, 60), Emulator: clean(sv.Emulator, 60)})
		}
	}
	return out
}

// HowToResolve says how a conflict is settled, for the household.
func HowToResolve(c Conflict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: the cabinet's save (%s, changed %s) and RomM's (%s, %s) differ: %s. ", clean(c.Game.Title(), 80),
		filepath.Base(c.Local), c.LocalAt.Format(time.RFC3339), c.RomMFile, c.RomMAt.Format(time.RFC3339), c.Reason)
	fmt.Fprintf(&b, "Keep one with library_resolve_save {system: %q, game_id: %q, slot: %q, keep: \"local\" or \"romm\"}; the other is kept as a backup (RomM's is in %s).",
		c.Game.System, es.GameID(c.Game.ROM), c.Slot, c.Copy)
	if c.HiddenBy != "" {
		fmt.Fprintf(&b, " Batocera loads the state %s when the game starts, which hides the save either way: load the save from RetroArch's menu, or move that state aside.", c.HiddenBy)
	}
	return b.String()
}
