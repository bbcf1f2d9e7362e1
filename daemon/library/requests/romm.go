package requests

import (
	"context"
	"path"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/daemon/tools/search"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// searchLimit bounds the RomM hits looked at per request.
const searchLimit = 20

func (v *view) readPlatforms(ctx context.Context) ([]romm.Platform, error) {
	if !v.platsRead {
		v.platsRead = true
		v.plats, v.platsErr = v.f.RomM.Platforms(ctx)
		if v.platsErr != nil && ctx.Err() == nil {
			v.pass.RomMErr = v.platsErr
		}
	}
	return v.plats, v.platsErr
}

// findInRomM searches RomM for the request's game, by name within the RomM platforms of its
// platform. A RomM without such a platform yet has not got it (RomM adds a platform when its
// scan meets the folder ROMarr filed the game in).
func (v *view) findInRomM(ctx context.Context, r Request) (romm.ROM, bool, error) {
	plats, err := v.readPlatforms(ctx)
	if err != nil {
		return romm.ROM{}, false, err
	}
	ids := v.platformIDs(plats, r)
	if len(ids) == 0 {
		return romm.ROM{}, false, nil
	}
	term := untrusted.Clean(strings.ReplaceAll(r.Game, "|", " "), 200) // RomM reads | as OR
	page, err := v.f.RomM.SearchROMs(ctx, romm.SearchQuery{Term: term, PlatformIDs: ids, Limit: searchLimit})
	if err != nil {
		if ctx.Err() == nil {
			v.pass.RomMErr = err
		}
		return romm.ROM{}, false, err
	}
	for _, rom := range page.Items {
		if arrived(rom, r) {
			return rom, true, nil
		}
	}
	return romm.ROM{}, false, nil
}

// platformIDs are RomM's platforms of the request: those whose Batocera folder is the
// request's system, those named like ROMarr's slug, and those whose folder ROMarr files under
// that slug.
func (v *view) platformIDs(plats []romm.Platform, r Request) []int {
	m := v.f.platforms()
	var ids []int
	for _, p := range plats {
		folder, _ := m.Folder(p.Slug, p.FSSlug, nil)
		slug, _ := romarr.PlatformFor(folder)
		switch {
		case r.System != "" && (folder == r.System || strings.EqualFold(p.FSSlug, r.System)),
			strings.EqualFold(p.Slug, r.Platform), strings.EqualFold(p.FSSlug, r.Platform),
			folder != "" && slug == r.Platform:
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// arrived reports whether a RomM ROM is the requested game: its name or its file's is the
// game's (case, punctuation, accents and tags such as "(USA)" aside), or its file is named
// like the release ROMarr picked.
func arrived(rom romm.ROM, r Request) bool {
	want := key(r.Game)
	if want == "" {
		return false
	}
	file := key(stem(rom.FSName))
	return key(rom.Name) == want || file == want || (r.Release != "" && file == key(stem(r.Release)))
}

// sameGame compares two titles the way arrived does.
func sameGame(a, b string) bool {
	ka := key(a)
	return ka != "" && ka == key(b)
}

// key is a title's comparison key: tags in brackets out, folded, a leading or trailing "the"
// dropped ("Legend of Zelda, The").
func key(s string) string {
	k := search.Fold(untags(s))
	k = strings.TrimPrefix(k, "the ")
	return strings.TrimSuffix(k, " the")
}

// untags removes (…) and […] groups, as No-Intro names carry regions and versions.
func untags(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(' || r == '[':
			depth++
		case (r == ')' || r == ']') && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// stem drops a file extension ("Chrono Trigger (USA).sfc"); a folder name has none.
func stem(name string) string {
	ext := path.Ext(name)
	if ext == "" || len(ext) > 6 || strings.ContainsAny(ext, " )]") {
		return name
	}
	return strings.TrimSuffix(name, ext)
}
