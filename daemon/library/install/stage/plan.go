package stage

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// plan is a validated Commit in paths.
type plan struct {
	parts    []move // stage part -> stage final name (step c)
	game     move   // stage -> system folder (step d)
	playlist *move  // stage playlist part -> system folder (step e)
	data     []byte // playlist content
	finals   []string
}

// planCommit validates c and turns it into paths.
func (s *Stage) planCommit(c Commit) (*plan, error) {
	if len(c.Files) == 0 {
		return nil, errors.New("no files to commit")
	}
	p := &plan{}
	seen := make(map[string]bool, len(c.Files))
	for _, f := range c.Files {
		if err := isClean(f); err != nil {
			return nil, err
		}
		if seen[f] {
			return nil, fmt.Errorf("%q is listed twice", f)
		}
		seen[f] = true
		final := filepath.Join(s.files, filepath.FromSlash(f))
		p.parts = append(p.parts, move{from: filepath.Join(s.files, filepath.FromSlash(partOf(f))), to: final})
	}
	// A file that is also a folder of another cannot both be renamed into
	// place; refuse before anything moves.
	for _, f := range c.Files {
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			if seen[d] {
				return nil, fmt.Errorf("%q is both a file and the folder of %q", d, f)
			}
		}
	}
	inGame := make(map[string]bool, len(c.Files)) // relative to the system folder
	switch {
	case c.Folder == "":
		if len(c.Files) != 1 || strings.Contains(c.Files[0], "/") {
			return nil, errors.New("without Folder a commit moves exactly one top-level file; set Folder for a multi-file game")
		}
		p.game = move{from: p.parts[0].to, to: filepath.Join(s.systemDir, c.Files[0])}
		inGame[c.Files[0]] = true
		p.finals = append(p.finals, p.game.to)
	default:
		if cn, err := CleanName(c.Folder); err != nil || cn != c.Folder {
			return nil, fmt.Errorf("folder %q is not a cleaned name; pass it through CleanName", c.Folder)
		}
		p.game = move{from: s.files, to: filepath.Join(s.systemDir, c.Folder)}
		for _, f := range c.Files {
			inGame[c.Folder+"/"+f] = true
			p.finals = append(p.finals, filepath.Join(p.game.to, filepath.FromSlash(f)))
		}
	}
	if c.Playlist != nil {
		data, err := playlistData(*c.Playlist, filepath.Base(p.game.to), inGame)
		if err != nil {
			return nil, err
		}
		p.data = data
		p.playlist = &move{from: filepath.Join(s.dir, playlistPart), to: filepath.Join(s.systemDir, c.Playlist.Name)}
		p.finals = append(p.finals, p.playlist.to)
	}
	return p, nil
}

// playlistData validates pl against the game it belongs to and renders it.
func playlistData(pl Playlist, game string, inGame map[string]bool) ([]byte, error) {
	if cn, err := CleanName(pl.Name); err != nil || cn != pl.Name {
		return nil, fmt.Errorf("playlist %q is not a cleaned name; pass it through CleanName", pl.Name)
	}
	if !strings.EqualFold(path.Ext(pl.Name), ".m3u") {
		return nil, fmt.Errorf("playlist %q must end with .m3u, the extension ES and RetroArch read", pl.Name)
	}
	if pl.Name == game {
		return nil, fmt.Errorf("playlist %q has the same name as the game it lists", pl.Name)
	}
	if len(pl.Lines) == 0 {
		return nil, fmt.Errorf("playlist %q lists no discs", pl.Name)
	}
	var b strings.Builder
	for _, l := range pl.Lines {
		if strings.HasPrefix(l, "#") {
			// ES and RetroArch read such a line as a comment and would
			// show the discs one by one.
			return nil, fmt.Errorf("playlist %q line %q starts with '#', which players read as a comment; name the folder without a leading '#'", pl.Name, l)
		}
		if !inGame[l] {
			return nil, fmt.Errorf("playlist %q line %q names no file of this commit; write the paths relative to the system folder, e.g. \"Folder/disc.chd\"", pl.Name, l)
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return []byte(b.String()), nil
}
