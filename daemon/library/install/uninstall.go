package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// UninstallResult is what an uninstall did.
type UninstallResult struct {
	System, Path, Name string
	Removed            []string // files removed (cabinet paths)
	// Kept are files the user changed (size or content) or that are not Cabinet's: left on disk.
	Kept     []string
	Listed   bool // ES still lists the game (a kept file, or ES not reloaded yet)
	Sent     []string
	Warnings []string
}

// Game is the ES game an uninstall is asked for.
type Game interface {
	LookupGame(ctx context.Context, system, id string) (es.Game, error)
}

// Uninstall removes a game Cabinet installed: each recorded file whose size and sha1 are still
// what the install wrote (a changed one is kept, and listed), the cover it set, the folder when it
// is empty, the record; then ES reloads its lists. Refused for a game Cabinet did not install and
// while the game runs.
func (in *Installer) Uninstall(ctx context.Context, lookup Game, system, id string) (UninstallResult, error) {
	unlock, err := in.lock()
	if err != nil {
		return UninstallResult{}, err
	}
	defer unlock()
	g, err := lookup.LookupGame(ctx, system, id)
	if err != nil {
		return UninstallResult{}, fmt.Errorf("find the game in ES: %w", err)
	}
	rec, err := in.Records.InstallAt(g.Path)
	if errors.Is(err, ErrNoInstall) {
		return UninstallResult{}, fmt.Errorf("%s (%s): %w", untrusted.Clean(g.Name, 100), system, ErrNotInstalled)
	}
	if err != nil {
		return UninstallResult{}, fmt.Errorf("read the install record: %w", err)
	}
	running, err := in.ES.RunningGame(ctx)
	if err != nil {
		return UninstallResult{}, fmt.Errorf("ask ES whether a game runs: %w", err)
	}
	if running != nil && running.Path == rec.Path {
		return UninstallResult{}, fmt.Errorf("%s is running: quit it first (batocera_quit_game), then uninstall", untrusted.Clean(g.Name, 100))
	}
	res := UninstallResult{System: rec.System, Path: rec.Path, Name: rec.Name}
	root := path.Join(RomsRoot, rec.System) + "/"
	// The playlist first: ES must not list a game whose discs are going.
	files := append([]InstalledFile(nil), rec.Files...)
	sort.SliceStable(files, func(i, j int) bool {
		return strings.HasSuffix(files[i].Path, ".m3u") && !strings.HasSuffix(files[j].Path, ".m3u")
	})
	for _, f := range files {
		if !strings.HasPrefix(f.Path, root) || strings.Contains(f.Path, "/../") {
			res.Kept = append(res.Kept, f.Path) // never outside the system folder, whatever the record says
			continue
		}
		local := in.local(f.Path)
		fi, err := os.Lstat(local)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != f.Size {
			res.Kept = append(res.Kept, f.Path)
			continue
		}
		sum, _, err := rawSHA1(local)
		if err != nil || sum != f.SHA1 {
			res.Kept = append(res.Kept, f.Path)
			continue
		}
		if err := os.Remove(local); err != nil {
			res.Kept = append(res.Kept, f.Path)
			res.Warnings = append(res.Warnings, "could not remove "+f.Path+": "+untrusted.Clean(err.Error(), 200))
			continue
		}
		res.Removed = append(res.Removed, f.Path)
	}
	for _, m := range rec.Media {
		if strings.HasPrefix(m, root) && !strings.Contains(m, "/../") {
			if err := os.Remove(in.local(m)); err == nil {
				res.Removed = append(res.Removed, m)
			}
		}
	}
	if rec.Folder != "" && strings.HasPrefix(rec.Folder, root) {
		removeEmptyDirs(in.local(rec.Folder))
	}
	if len(res.Kept) == 0 {
		if err := in.Records.DeleteInstall(rec.Path); err != nil {
			res.Warnings = append(res.Warnings, "the install record was not removed: "+untrusted.Clean(err.Error(), 200))
		}
	} else {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d file(s) changed since the install, or not Cabinet's, are left on the cabinet: %s",
			len(res.Kept), strings.Join(res.Kept, ", ")))
		rec.Files = keptFiles(rec.Files, res.Kept)
		if err := in.Records.PutInstall(rec); err != nil {
			res.Warnings = append(res.Warnings, "the install record was not updated: "+untrusted.Clean(err.Error(), 200))
		}
	}
	if err := in.ES.ReloadGames(ctx); err != nil {
		res.Warnings = append(res.Warnings, "ES did not reload its game lists: "+untrusted.Clean(err.Error(), 200)+"; reload them from ES's menu")
	} else {
		res.Sent = append(res.Sent, "GET /reloadgames")
	}
	res.Listed = len(res.Kept) > 0
	in.show(ctx, "Removed "+untrusted.Clean(rec.Name, 80))
	return res, nil
}

func keptFiles(all []InstalledFile, kept []string) []InstalledFile {
	keep := map[string]bool{}
	for _, k := range kept {
		keep[k] = true
	}
	var out []InstalledFile
	for _, f := range all {
		if keep[f.Path] {
			out = append(out, f)
		}
	}
	return out
}

// removeEmptyDirs removes dir and its subfolders when nothing is left in them.
func removeEmptyDirs(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			removeEmptyDirs(dir + "/" + e.Name())
		}
	}
	os.Remove(dir) // fails, as it should, when something is left
}
