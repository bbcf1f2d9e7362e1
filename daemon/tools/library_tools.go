package tools

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// libraryTools is what the library tools share.
type libraryTools struct {
	lib    Library
	es     ES
	daemon DaemonStatus // nil without the daemon: no play history figures
	mark   *cabinetMarker
}

// Bounds of library pages.
const (
	libraryDefaultLimit = 20
	libraryMaxLimit     = 50
	maxSummary          = 2000
	maxROMFiles         = 50
	maxArchiveMembers   = 50
)

type libraryStatusResult struct {
	RomM     *rommStatus  `json:"romm"`
	ROMarr   *romarrBrief `json:"romarr"`
	Warnings []string     `json:"warnings"`
}

type rommStatus struct {
	Configured        bool             `json:"configured"`
	Reachable         bool             `json:"reachable"`
	Version           string           `json:"version"`
	Paired            bool             `json:"paired"`
	DeviceID          *string          `json:"device_id"`
	ScopesOK          []string         `json:"scopes_ok"`
	UnmappedPlatforms []string         `json:"unmapped_platforms"`
	PlayHistory       *rommPlayHistory `json:"play_history"`
}

// rommPlayHistory is where the cabinet's sessions stand in RomM's play history.
type rommPlayHistory struct {
	Delivered int `json:"delivered"`
	Waiting   int `json:"waiting"`
	Unmatched int `json:"unmatched"`
}

type romarrBrief struct {
	Configured bool   `json:"configured"`
	Reachable  bool   `json:"reachable"`
	Version    string `json:"version"`
}

func (l libraryTools) statusTool() (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("library_status", "Library status",
		"The household's game library servers: whether RomM and ROMarr answer, their versions, which of RomM's read "+
			"scopes the token has (checked with reads only), and the RomM platforms that have no Batocera system on "+
			"this cabinet (their games cannot be played here). Call it first when asked about the library.",
		reads, true,
		withOutput(
			req("romm", nullable(object("RomM; null when not configured.",
				req("configured", boolean("cabinet.romm.url is set.")),
				req("reachable", boolean("RomM answered.")),
				req("version", str("RomM's version, or empty.")),
				req("paired", boolean("The cabinet is paired with RomM as a device.")),
				req("device_id", nullable(str("RomM's device id of the cabinet, null when not paired."))),
				req("scopes_ok", array("RomM scopes the token has (reads only are tried).", str("A scope, e.g. roms.read."))),
				req("unmapped_platforms", array("RomM platforms with games but no Batocera system on this cabinet.", str("A RomM platform slug."))),
				req("play_history", nullable(object("The sessions logged since pairing, by where they stand in RomM's play history; null when the cabinet does not report them (not paired, cabinet.romm.report_play off, or no daemon).",
					req("delivered", integer("Sessions RomM has.")),
					req("waiting", integer("Sessions not sent yet, or retried after RomM failed.")),
					req("unmatched", integer("Sessions of games RomM does not have: not sent.")),
				))),
			))),
			req("romarr", nullable(object("ROMarr; null when not configured.",
				req("configured", boolean("cabinet.romarr.url is set.")),
				req("reachable", boolean("ROMarr answered.")),
				req("version", str("ROMarr's version, or empty.")),
			))),
			req("warnings", array("What does not work, and what to do.", str("One warning."))),
		))
	return t, typed(func(ctx context.Context, _ none) (libraryStatusResult, error) { return l.status(ctx), nil })
}

func (l libraryTools) status(ctx context.Context) libraryStatusResult {
	res := libraryStatusResult{Warnings: []string{}}
	if r := l.lib.RomM; r != nil {
		st := &rommStatus{Configured: true, ScopesOK: []string{}, UnmappedPlatforms: []string{}}
		res.RomM = st
		if id := l.lib.DeviceID; id != "" {
			st.Paired, st.DeviceID = true, &id
		}
		if l.daemon != nil {
			if h, err := l.daemon.DaemonHealth(ctx); err == nil && h.RomM != nil {
				st.PlayHistory = &rommPlayHistory{Delivered: h.RomM.Delivered, Waiting: h.RomM.Waiting, Unmatched: h.RomM.Unmatched}
				if n := h.RomM.Unmatched; n > 0 {
					res.Warnings = append(res.Warnings, fmt.Sprintf("%d logged session(s) are of games RomM does not have: they are not in RomM's play history.", n))
				}
			}
		}
		v, err := r.Version(ctx)
		if err != nil {
			res.Warnings = append(res.Warnings, "RomM: "+untrusted.Clean(err.Error(), maxErrorRunes))
		} else {
			st.Reachable, st.Version = true, v.String()
			if !v.Verified() {
				res.Warnings = append(res.Warnings, fmt.Sprintf("RomM %s is outside the versions Cabinet was checked against (4.8 to 5.3): most reads should work, some may not.", v))
			}
			probes := r.ProbeScopes(ctx)
			scopes := make([]string, 0, len(probes))
			for s := range probes {
				scopes = append(scopes, s)
			}
			sort.Strings(scopes)
			for _, s := range scopes {
				if err := probes[s]; err == nil {
					st.ScopesOK = append(st.ScopesOK, s)
				} else if !errors.Is(err, context.Canceled) {
					res.Warnings = append(res.Warnings, fmt.Sprintf("RomM scope %s: %s", s, untrusted.Clean(err.Error(), maxErrorRunes)))
				}
			}
			if view, err := platformsOf(ctx, r, l.mark.cat, l.lib.Platforms); err == nil {
				for _, p := range view.list {
					if _, ok := view.folders[p.ID]; !ok && p.ROMCount > 0 {
						st.UnmappedPlatforms = append(st.UnmappedPlatforms, p.Slug)
					}
				}
				if !view.esKnown {
					res.Warnings = append(res.Warnings, "EmulationStation does not answer: the platforms' Batocera systems were not checked against the cabinet's.")
				}
			}
		}
	}
	if r := l.lib.ROMarr; r != nil {
		b := &romarrBrief{Configured: true}
		res.ROMarr = b
		if st, err := r.Status(ctx); err != nil {
			res.Warnings = append(res.Warnings, "ROMarr: "+untrusted.Clean(err.Error(), maxErrorRunes))
		} else {
			b.Reachable, b.Version = true, st.Version
		}
	}
	return res
}

func (r libraryStatusResult) text() string {
	var b strings.Builder
	if r.RomM != nil {
		if r.RomM.Reachable {
			fmt.Fprintf(&b, "RomM %s answers; scopes: %s.", r.RomM.Version, strings.Join(r.RomM.ScopesOK, ", "))
			if n := len(r.RomM.UnmappedPlatforms); n > 0 {
				fmt.Fprintf(&b, " %d platform(s) have no Batocera system here: %s.", n, strings.Join(r.RomM.UnmappedPlatforms, ", "))
			}
		} else {
			b.WriteString("RomM does not answer.")
		}
	}
	if r.ROMarr != nil {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		if r.ROMarr.Reachable {
			fmt.Fprintf(&b, "ROMarr %s answers.", r.ROMarr.Version)
		} else {
			b.WriteString("ROMarr does not answer.")
		}
	}
	for _, w := range r.Warnings {
		b.WriteString("\nWarning: " + w)
	}
	return b.String()
}

// On-cabinet filter values.
const (
	onCabinetAny = "any"
	onCabinetYes = "yes"
	onCabinetNo  = "no"
)

type librarySearchArgs struct {
	Query     string `json:"query"`
	Platform  string `json:"platform"`
	OnCabinet string `json:"on_cabinet"`
	Offset    int    `json:"offset"`
	Limit     int    `json:"limit"`
}

type librarySearchResult struct {
	Hits            []libraryHit `json:"hits"`
	Total           int          `json:"total"`
	NextOffset      *int         `json:"next_offset"`
	MatchedPlatform *string      `json:"matched_platform,omitempty"`
	Warnings        []string     `json:"warnings"`
}

func (l libraryTools) searchTool() (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("library_search", "Search the library",
		"Search the household's game library (RomM, and ROMarr's library when configured) by title. Every RomM hit "+
			"says whether and where it is on this cabinet (on_cabinet: system and game_id for batocera_launch_game) "+
			"and which Batocera system its platform maps to. platform is a RomM platform slug or a Batocera system "+
			"folder. on_cabinet=no finds what the library has that the cabinet lacks; a filtered page may hold fewer "+
			"than limit hits, next_offset continues.",
		reads, true,
		withInput(
			req("query", str("Title words; RomM matches every word in the name or file name.", minLen(1), maxLen(200))),
			opt("platform", str("A RomM platform slug (snes, genesis) or a Batocera system folder (snes, megadrive).", maxLen(maxIdent))),
			opt("on_cabinet", str("Keep hits on the cabinet (yes), not on it (no), or all (any).", enum(onCabinetAny, onCabinetYes, onCabinetNo), defaultValue(onCabinetAny))),
			opt("offset", integer("RomM offset to start at (next_offset of the previous page).", minimum(0), maximum(1_000_000), defaultValue(0))),
			opt("limit", integer("Hits per RomM page.", minimum(1), maximum(libraryMaxLimit), defaultValue(libraryDefaultLimit))),
		),
		withOutput(
			req("hits", array("Hits in RomM's order (ROMarr's library items after them on the first page).", hitProps())),
			req("total", integer("RomM's count of matches, before the on_cabinet filter (-1 when RomM did not say).")),
			req("next_offset", nullable(integer("offset of the next page, null at the end."))),
			opt("matched_platform", str("What platform matched: a RomM platform or a Batocera system.")),
			req("warnings", array("What limited the answer.", str("One warning."))),
		))
	return t, typed(func(ctx context.Context, a librarySearchArgs) (librarySearchResult, error) { return l.search(ctx, a) })
}

func (l libraryTools) search(ctx context.Context, a librarySearchArgs) (librarySearchResult, error) {
	query := untrusted.Clean(a.Query, 200)
	if query == "" {
		return librarySearchResult{}, refuse("Give some words of the title to search for.")
	}
	limit := a.Limit
	if limit <= 0 {
		limit = libraryDefaultLimit
	}
	limit = min(limit, libraryMaxLimit)
	res := librarySearchResult{Hits: []libraryHit{}, Warnings: []string{}}
	if r := l.lib.RomM; r != nil {
		view, err := platformsOf(ctx, r, l.mark.cat, l.lib.Platforms)
		if err != nil {
			return res, rommFailure("read RomM's platforms", err)
		}
		q := romm.SearchQuery{Term: query, Offset: a.Offset, Limit: limit, WithFiles: true}
		if a.Platform != "" {
			ids, matched, err := view.match(a.Platform)
			if err != nil {
				return res, err
			}
			q.PlatformIDs, res.MatchedPlatform = ids, &matched
		}
		page, err := r.SearchROMs(ctx, q)
		if err != nil {
			return res, rommFailure("search RomM", err)
		}
		res.Total = page.Total
		marks := l.mark.mark(ctx, page.Items, view, &res.Warnings)
		for i, rom := range page.Items {
			h := hitOf(rom, view)
			h.OnCabinet = marks[i]
			switch {
			case a.OnCabinet == onCabinetYes && h.OnCabinet == nil, a.OnCabinet == onCabinetNo && h.OnCabinet != nil:
				continue
			}
			res.Hits = append(res.Hits, h)
		}
		if next := a.Offset + len(page.Items); len(page.Items) > 0 && (page.Total < 0 || next < page.Total) {
			res.NextOffset = &next
		}
	}
	if r := l.lib.ROMarr; r != nil && a.Offset == 0 && a.OnCabinet != onCabinetYes {
		items, err := r.Search(ctx, query, limit)
		switch {
		case errors.Is(err, romarr.ErrNoLibrary):
		case err != nil:
			res.Warnings = append(res.Warnings, "ROMarr's library was not searched: "+untrusted.Clean(err.Error(), maxErrorRunes))
		default:
			for _, it := range items {
				res.Hits = append(res.Hits, romarrHit(it))
			}
		}
	}
	return res, nil
}

// romarrHit is a ROMarr library item as a hit. ROMarr names the
// platform by its library server's slug, which maps like RomM's.
func romarrHit(it romarr.LibraryItem) libraryHit {
	h := libraryHit{Name: it.Name, Platform: it.Platform, Genres: nonNil(it.Genres), Source: "romarr"}
	if it.Year > 0 {
		y := it.Year
		h.Year = &y
	}
	return h
}

func (r librarySearchResult) text() string {
	var b strings.Builder
	if len(r.Hits) == 0 {
		b.WriteString("No match in the library.")
	} else {
		fmt.Fprintf(&b, "%d hit(s)", len(r.Hits))
		if r.Total >= 0 {
			fmt.Fprintf(&b, " of %d in RomM", r.Total)
		}
		b.WriteString(":")
		for _, h := range r.Hits {
			b.WriteString("\n- " + h.line())
		}
	}
	if r.NextOffset != nil {
		fmt.Fprintf(&b, "\nMore: offset %d.", *r.NextOffset)
	}
	for _, w := range r.Warnings {
		b.WriteString("\nWarning: " + w)
	}
	return b.String()
}

// Parts romm_get_rom can include.
const (
	includeFiles    = "files"
	includeMetadata = "metadata"
	includeProgress = "progress"
)

type getROMArgs struct {
	ROMID   int      `json:"rom_id"`
	Include []string `json:"include"`
}

type getROMResult struct {
	ROM       romSynopsis `json:"rom"`
	Truncated []string    `json:"truncated"`
}

type romSynopsis struct {
	ROMID          int        `json:"rom_id"`
	Name           string     `json:"name"`
	Platform       string     `json:"platform"`
	BatoceraSystem *string    `json:"batocera_system"`
	Summary        string     `json:"summary"`
	Year           *int       `json:"year"`
	Genres         []string   `json:"genres"`
	Players        string     `json:"players"`
	Developer      string     `json:"developer"`
	Regions        []string   `json:"regions"`
	OnCabinet      *onCabinet `json:"on_cabinet"`
	Files          []romFile  `json:"files,omitempty"`
}

type romFile struct {
	ID             int             `json:"id"`
	Name           string          `json:"name"`
	SizeBytes      int64           `json:"size_bytes"`
	Category       string          `json:"category"`
	CRC            string          `json:"crc"`
	MD5            string          `json:"md5"`
	SHA1           string          `json:"sha1"`
	ArchiveMembers []archiveMember `json:"archive_members,omitempty"`
}

type archiveMember struct {
	Name      string `json:"name"`
	SizeBytes int64  `json:"size_bytes"`
	CRC       string `json:"crc"`
	MD5       string `json:"md5"`
	SHA1      string `json:"sha1"`
}

func (l libraryTools) getROMTool() (mcp.Tool, server.ToolHandlerFunc) {
	hash := func(d string) js { return str(d + ", lowercase hex; empty when RomM did not compute it.") }
	t := defineLibrary("romm_get_rom", "Get a RomM ROM",
		"One RomM ROM: name, platform and its Batocera system, whether it is on this cabinet, and with include: "+
			"metadata (summary, genres, players, developer, regions) and files (each with size, category and RomM's "+
			"hashes, archive members). Long parts are cut; truncated lists what was.",
		reads, true,
		withInput(
			req("rom_id", integer("RomM's ROM id (from library_search).", minimum(1), maximum(1<<31-1))),
			opt("include", array("Parts to include.", str("", enum(includeFiles, includeMetadata, includeProgress)), maxItems(3))),
		),
		withOutput(
			req("rom", object("The ROM.",
				req("rom_id", integer("RomM's id.")),
				req("name", str("The game.")),
				req("platform", str("RomM's platform slug.")),
				req("batocera_system", nullable(str("Its Batocera system on this cabinet, null when unmapped."))),
				req("summary", str("Summary (with include metadata), capped.")),
				req("year", nullable(integer("Release year."))),
				req("genres", array("Genres (with include metadata).", str("A genre."))),
				req("players", str("Players (with include metadata).")),
				req("developer", str("Developer (with include metadata).")),
				req("regions", array("Regions (with include metadata).", str("A region."))),
				req("on_cabinet", nullable(object("Where it is on this cabinet.",
					req("system", str("Batocera system.")), req("game_id", str("ES game id.")), req("path", str("The file."))))),
				opt("files", array("Files (with include files), at most 50.", object("",
					req("id", integer("RomM's file id.")),
					req("name", str("File name.")),
					req("size_bytes", integer("Size.")),
					req("category", str("game, dlc, hack, manual, patch, update…")),
					req("crc", hash("CRC32")), req("md5", hash("MD5")), req("sha1", hash("SHA-1")),
					opt("archive_members", array("Members of an archive, hashed by RomM, at most 50.", object("",
						req("name", str("Member path.")), req("size_bytes", integer("Size.")),
						req("crc", hash("CRC32")), req("md5", hash("MD5")), req("sha1", hash("SHA-1"))))),
				))),
			)),
			req("truncated", array("What was cut or left out, and why.", str("One part."))),
		))
	return t, typed(func(ctx context.Context, a getROMArgs) (getROMResult, error) { return l.getROM(ctx, a) })
}

func (l libraryTools) getROM(ctx context.Context, a getROMArgs) (getROMResult, error) {
	r := l.lib.RomM
	rom, err := r.ROM(ctx, a.ROMID)
	if err != nil {
		return getROMResult{}, rommFailure(fmt.Sprintf("read RomM ROM %d", a.ROMID), err)
	}
	view, err := platformsOf(ctx, r, l.mark.cat, l.lib.Platforms)
	if err != nil {
		return getROMResult{}, rommFailure("read RomM's platforms", err)
	}
	want := map[string]bool{}
	for _, inc := range a.Include {
		want[inc] = true
	}
	h := hitOf(rom, view)
	res := getROMResult{Truncated: []string{}, ROM: romSynopsis{ROMID: rom.ID, Name: h.Name, Platform: h.Platform,
		BatoceraSystem: h.BatoceraSystem, Year: h.Year, Genres: []string{}, Regions: []string{}}}
	res.ROM.OnCabinet = l.mark.mark(ctx, []romm.ROM{rom}, view, &res.Truncated)[0]
	if want[includeMetadata] {
		res.ROM.Summary = untrusted.Clean(rom.Summary, maxSummary)
		if len([]rune(rom.Summary)) > maxSummary {
			res.Truncated = append(res.Truncated, fmt.Sprintf("summary: cut to %d characters", maxSummary))
		}
		res.ROM.Genres, res.ROM.Regions = nonNil(rom.Genres), nonNil(rom.Regions)
		res.ROM.Players, res.ROM.Developer = rom.Players, rom.Developer
	}
	if want[includeFiles] {
		res.ROM.Files = []romFile{}
		for i, f := range rom.Files {
			if i == maxROMFiles {
				res.Truncated = append(res.Truncated, fmt.Sprintf("files: %d of %d shown", maxROMFiles, len(rom.Files)))
				break
			}
			rf := romFile{ID: f.ID, Name: f.Name, SizeBytes: f.SizeBytes, Category: f.Category, CRC: f.CRC, MD5: f.MD5, SHA1: f.SHA1}
			for j, m := range f.ArchiveMembers {
				if j == maxArchiveMembers {
					res.Truncated = append(res.Truncated, fmt.Sprintf("archive_members of %s: %d of %d shown", f.Name, maxArchiveMembers, len(f.ArchiveMembers)))
					break
				}
				rf.ArchiveMembers = append(rf.ArchiveMembers, archiveMember{Name: m.Name, SizeBytes: m.SizeBytes, CRC: m.CRC, MD5: m.MD5, SHA1: m.SHA1})
			}
			res.ROM.Files = append(res.ROM.Files, rf)
		}
	}
	if want[includeProgress] {
		res.Truncated = append(res.Truncated, "progress: not read (RomM's per-user progress comes with pairing the cabinet as a RomM device)")
	}
	return res, nil
}

func (r getROMResult) text() string {
	var b strings.Builder
	h := libraryHit{ROMID: &r.ROM.ROMID, Name: r.ROM.Name, Platform: r.ROM.Platform, BatoceraSystem: r.ROM.BatoceraSystem,
		Year: r.ROM.Year, OnCabinet: r.ROM.OnCabinet, Source: "romm"}
	b.WriteString(h.line())
	if r.ROM.Summary != "" {
		b.WriteString("\n" + r.ROM.Summary)
	}
	if len(r.ROM.Genres) > 0 {
		b.WriteString("\nGenres: " + strings.Join(r.ROM.Genres, ", "))
	}
	for _, f := range r.ROM.Files {
		fmt.Fprintf(&b, "\nFile %s (%d bytes, %s)", f.Name, f.SizeBytes, f.Category)
	}
	for _, t := range r.Truncated {
		b.WriteString("\nNote: " + t)
	}
	return b.String()
}

type platformsResult struct {
	Platforms []platformInfo `json:"platforms"`
}

type platformInfo struct {
	Slug           string `json:"slug"`
	Name           string `json:"name"`
	ROMs           int    `json:"roms"`
	BatoceraSystem string `json:"batocera_system"`
}

func (l libraryTools) listPlatformsTool() (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("romm_list_platforms", "List RomM platforms",
		"RomM's platforms with their ROM counts and the Batocera system each maps to on this cabinet, or unmapped "+
			"(no folder here: its games cannot be played on this cabinet; cabinet.romm.platform_map can map it).",
		reads, true,
		withOutput(req("platforms", array("RomM's platforms.", object("",
			req("slug", str("RomM's platform slug (library_search's platform takes it).")),
			req("name", str("Display name.")),
			req("roms", integer("ROMs in RomM.")),
			req("batocera_system", str("The Batocera system folder, or unmapped.")),
		)))))
	return t, typed(func(ctx context.Context, _ none) (platformsResult, error) {
		view, err := platformsOf(ctx, l.lib.RomM, l.mark.cat, l.lib.Platforms)
		if err != nil {
			return platformsResult{}, rommFailure("read RomM's platforms", err)
		}
		res := platformsResult{Platforms: []platformInfo{}}
		for _, p := range view.list {
			f := "unmapped"
			if got, ok := view.folders[p.ID]; ok {
				f = got
			}
			res.Platforms = append(res.Platforms, platformInfo{Slug: p.Slug, Name: p.Name, ROMs: p.ROMCount, BatoceraSystem: f})
		}
		return res, nil
	})
}

func (r platformsResult) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d RomM platforms:", len(r.Platforms))
	for _, p := range r.Platforms {
		fmt.Fprintf(&b, "\n- %s (%s): %d ROMs → %s", p.Slug, p.Name, p.ROMs, p.BatoceraSystem)
	}
	return b.String()
}

type listCollectionsArgs struct {
	Kind string `json:"kind"`
	Type string `json:"type"`
}

type collectionsResult struct {
	Collections []collectionInfo `json:"collections"`
}

type collectionInfo struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	Description string `json:"description"`
	ROMs        int    `json:"roms"`
}

func collectionProps() js {
	return object("",
		req("id", str("The collection's id (romm_get_collection takes it with kind).")),
		req("kind", str("regular, smart or virtual.", enum(romm.KindRegular, romm.KindSmart, romm.KindVirtual))),
		req("name", str("Name.")),
		req("description", str("Description, capped.")),
		req("roms", integer("ROMs in it.")),
	)
}

func (l libraryTools) listCollectionsTool() (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("romm_list_collections", "List RomM collections",
		"RomM's collections: regular ones (made by hand), smart ones (saved filters) and virtual ones (RomM groups "+
			"games by genre, company, franchise, mode; type picks one grouping). Without kind, regular and smart.",
		reads, true,
		withInput(
			opt("kind", str("Which collections.", enum(romm.KindRegular, romm.KindSmart, romm.KindVirtual))),
			opt("type", str("For virtual collections: the grouping.", enum(romm.VirtualTypes...))),
		),
		withOutput(req("collections", array("Collections.", collectionProps()))))
	return t, typed(func(ctx context.Context, a listCollectionsArgs) (collectionsResult, error) {
		kinds := []string{romm.KindRegular, romm.KindSmart}
		if a.Kind != "" {
			kinds = []string{a.Kind}
		}
		if a.Type != "" && a.Kind != romm.KindVirtual {
			return collectionsResult{}, refuse("type applies to virtual collections only: add kind=virtual.")
		}
		res := collectionsResult{Collections: []collectionInfo{}}
		for _, k := range kinds {
			arg := k
			if k == romm.KindVirtual && a.Type != "" {
				arg = k + ":" + a.Type
			}
			list, err := l.lib.RomM.Collections(ctx, arg)
			if err != nil {
				return res, rommFailure("list RomM's "+k+" collections", err)
			}
			for _, c := range list {
				res.Collections = append(res.Collections, collectionInfo{ID: c.ID, Kind: c.Kind, Name: c.Name, Description: c.Description, ROMs: c.ROMCount})
			}
		}
		return res, nil
	})
}

func (r collectionsResult) text() string {
	if len(r.Collections) == 0 {
		return "No collections."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d collection(s):", len(r.Collections))
	for _, c := range r.Collections {
		fmt.Fprintf(&b, "\n- %s (%s %s): %d ROMs", c.Name, c.Kind, c.ID, c.ROMs)
	}
	return b.String()
}

type getCollectionArgs struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

type getCollectionResult struct {
	Collection collectionInfo `json:"collection"`
	Hits       []libraryHit   `json:"hits"`
	Total      int            `json:"total"`
	NextOffset *int           `json:"next_offset"`
	Warnings   []string       `json:"warnings"`
}

func (l libraryTools) getCollectionTool() (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("romm_get_collection", "Get a RomM collection",
		"One RomM collection and its ROMs, a page at a time, each saying whether and where it is on this cabinet.",
		reads, true,
		withInput(
			req("id", str("The collection's id (from romm_list_collections).", minLen(1), maxLen(200))),
			req("kind", str("Its kind.", enum(romm.KindRegular, romm.KindSmart, romm.KindVirtual))),
			opt("offset", integer("Offset (next_offset of the previous page).", minimum(0), maximum(1_000_000), defaultValue(0))),
			opt("limit", integer("ROMs per page.", minimum(1), maximum(libraryMaxLimit), defaultValue(libraryDefaultLimit))),
		),
		withOutput(
			req("collection", collectionProps()),
			req("hits", array("The collection's ROMs.", hitProps())),
			req("total", integer("ROMs in the collection (-1 when RomM did not say).")),
			req("next_offset", nullable(integer("offset of the next page, null at the end."))),
			req("warnings", array("What limited the answer.", str("One warning."))),
		))
	return t, typed(func(ctx context.Context, a getCollectionArgs) (getCollectionResult, error) {
		r := l.lib.RomM
		c, err := r.Collection(ctx, a.Kind, a.ID)
		if err != nil {
			return getCollectionResult{}, rommFailure("read the collection", err)
		}
		view, err := platformsOf(ctx, r, l.mark.cat, l.lib.Platforms)
		if err != nil {
			return getCollectionResult{}, rommFailure("read RomM's platforms", err)
		}
		limit := a.Limit
		if limit <= 0 {
			limit = libraryDefaultLimit
		}
		q := romm.SearchQuery{Offset: a.Offset, Limit: min(limit, libraryMaxLimit), WithFiles: true}
		switch a.Kind {
		case romm.KindVirtual:
			q.VirtualCollectionID = c.ID
		default:
			var n int
			if _, err := fmt.Sscan(c.ID, &n); err != nil || n <= 0 {
				return getCollectionResult{}, refuse("RomM's collection id %q is not a number.", c.ID)
			}
			if a.Kind == romm.KindSmart {
				q.SmartCollectionID = n
			} else {
				q.CollectionID = n
			}
		}
		page, err := r.SearchROMs(ctx, q)
		if err != nil {
			return getCollectionResult{}, rommFailure("list the collection's ROMs", err)
		}
		res := getCollectionResult{Collection: collectionInfo{ID: c.ID, Kind: c.Kind, Name: c.Name, Description: c.Description, ROMs: c.ROMCount},
			Hits: []libraryHit{}, Total: page.Total, Warnings: []string{}}
		marks := l.mark.mark(ctx, page.Items, view, &res.Warnings)
		for i, rom := range page.Items {
			h := hitOf(rom, view)
			h.OnCabinet = marks[i]
			res.Hits = append(res.Hits, h)
		}
		if next := a.Offset + len(page.Items); len(page.Items) > 0 && (page.Total < 0 || next < page.Total) {
			res.NextOffset = &next
		}
		return res, nil
	})
}

func (r getCollectionResult) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s collection): %d ROMs", r.Collection.Name, r.Collection.Kind, r.Collection.ROMs)
	for _, h := range r.Hits {
		b.WriteString("\n- " + h.line())
	}
	if r.NextOffset != nil {
		fmt.Fprintf(&b, "\nMore: offset %d.", *r.NextOffset)
	}
	return b.String()
}
