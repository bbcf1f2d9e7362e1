package tools

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// RomM is what the library tools ask RomM; *romm.Client. Its results are
// cleaned already; its errors say what to do and never carry the token.
type RomM interface {
	Version(ctx context.Context) (romm.Version, error)
	Platforms(ctx context.Context) ([]romm.Platform, error)
	SearchROMs(ctx context.Context, q romm.SearchQuery) (romm.Page, error)
	ROM(ctx context.Context, id int) (romm.ROM, error)
	Collections(ctx context.Context, kind string) ([]romm.Collection, error)
	Collection(ctx context.Context, kind, id string) (romm.Collection, error)
	Get(ctx context.Context, path string, query url.Values) (status int, body []byte, err error)
	ProbeScopes(ctx context.Context) map[string]error
}

// Library is the household's library servers. A nil server is not
// configured and its tools are not registered.
type Library struct {
	RomM   RomM
	ROMarr ROMarr
	// Platforms maps RomM platforms to Batocera folders (nil: the
	// default table, no overrides).
	Platforms *platforms.Map
	// APIIndex loads the RomM server's operation index for romm_api_*
	// (fetched once per version, cached in the state dir); nil: those
	// tools are not registered.
	APIIndex APIIndexLoader
	// AllowWrites registers the write tools (cabinet.library.allow_writes).
	AllowWrites bool
	// DeviceID is RomM's id of the cabinet when it is paired, "" when not.
	DeviceID string
	// RomMURL is RomM's base URL (cabinet.romm.url): install records name it.
	RomMURL string
	// Installer, when set, registers library_install and library_uninstall
	// (cabinet.library.allow_install).
	Installer Installer
}

// rommFailure turns a RomM error into a refusal that says what to do,
// logged as RomM's error (a warning for an item RomM does not have).
func rommFailure(what string, err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, context.DeadlineExceeded):
		return failedAt(loggerRomM, mcp.LoggingLevelError, "Could not %s: RomM did not answer in time; it may be busy (scanning). Retry in a moment.", what)
	case errors.Is(err, romm.ErrNotFound):
		return failedAt(loggerRomM, mcp.LoggingLevelWarning, "Could not %s: RomM has no such item.", what)
	}
	return failedAt(loggerRomM, mcp.LoggingLevelError, "Could not %s: %s", what, untrusted.Clean(err.Error(), maxErrorRunes))
}

// platformView is RomM's platforms with their Batocera folders, as this
// cabinet's ES lists them.
type platformView struct {
	list    []romm.Platform
	folders map[int]string // platform id → Batocera folder; absent: unmapped
	byID    map[int]romm.Platform
	esKnown bool // ES answered: folders are limited to the systems it lists
}

// platformsOf reads RomM's platforms and maps each to a folder ES lists
// (the catalog's list of ES's systems: one fetch serves the search index,
// the on-cabinet index and this, until ES reloads). When ES does not
// answer, the folders are not filtered (and esKnown says so).
func platformsOf(ctx context.Context, r RomM, cat *catalog, m *platforms.Map) (platformView, error) {
	list, err := r.Platforms(ctx)
	if err != nil {
		return platformView{}, err
	}
	var listed map[string]bool
	v := platformView{list: list, folders: map[int]string{}, byID: map[int]romm.Platform{}}
	if _, systems, err := cat.index(ctx); err == nil {
		listed = make(map[string]bool, len(systems))
		for _, s := range systems {
			listed[s] = true
		}
		v.esKnown = true
	}
	for _, p := range list {
		v.byID[p.ID] = p
		if f, ok := m.Folder(p.Slug, p.FSSlug, listed); ok {
			v.folders[p.ID] = f
		}
	}
	return v, nil
}

// folder is the Batocera folder of a platform id, or nil.
func (v platformView) folder(id int) *string {
	if f, ok := v.folders[id]; ok {
		return &f
	}
	return nil
}

// match resolves a platform argument: a RomM slug (or fs_slug), else a
// Batocera folder. It returns the platform ids and what it matched.
func (v platformView) match(arg string) (ids []int, matched string, err error) {
	a := strings.ToLower(strings.TrimSpace(arg))
	for _, p := range v.list {
		if strings.EqualFold(p.Slug, a) || strings.EqualFold(p.FSSlug, a) {
			ids = append(ids, p.ID)
		}
	}
	if len(ids) > 0 {
		return ids, "RomM platform " + a, nil
	}
	for _, p := range v.list {
		if v.folders[p.ID] == a {
			ids = append(ids, p.ID)
		}
	}
	if len(ids) > 0 {
		return ids, "Batocera system " + a, nil
	}
	var known []string
	for _, p := range v.list {
		known = append(known, p.Slug)
	}
	sort.Strings(known)
	if len(known) > 20 {
		known = append(known[:20], "…")
	}
	return nil, "", refuse("RomM has no platform %q, and no RomM platform maps to a Batocera system of that name. "+
		"RomM's platforms: %s (romm_list_platforms lists them with their Batocera systems).", untrusted.Clean(arg, maxIdent), strings.Join(known, ", "))
}

// libraryHit is one search result (mcp-tools.md, library_search).
type libraryHit struct {
	ROMID          *int       `json:"rom_id"`
	Name           string     `json:"name"`
	Platform       string     `json:"platform"`
	BatoceraSystem *string    `json:"batocera_system"`
	Year           *int       `json:"year"`
	Genres         []string   `json:"genres"`
	Files          int        `json:"files"`
	SizeBytes      int64      `json:"size_bytes"`
	OnCabinet      *onCabinet `json:"on_cabinet"`
	Source         string     `json:"source"`
}

// onCabinet is where a library game sits on this cabinet.
type onCabinet struct {
	System string `json:"system"`
	GameID string `json:"game_id"`
	Path   string `json:"path"`
}

func hitProps() js {
	return object("",
		req("rom_id", nullable(integer("RomM's id of the ROM (romm_get_rom takes it); null for a ROMarr library item."))),
		req("name", str("The game.")),
		req("platform", str("RomM's platform slug (or ROMarr's platform).")),
		req("batocera_system", nullable(str("The Batocera system folder the platform maps to on this cabinet; null when unmapped."))),
		req("year", nullable(integer("Release year, null when unknown."))),
		req("genres", array("Genres.", str("A genre."))),
		req("files", integer("Files in the ROM (0 when RomM did not list them).")),
		req("size_bytes", integer("Size on RomM's disk.")),
		req("on_cabinet", nullable(object("Where it is on this cabinet: batocera_launch_game takes system and game_id.",
			req("system", str("Batocera system.")),
			req("game_id", str("EmulationStation's game id.")),
			req("path", str("The file on the cabinet."))))),
		req("source", str("Which server the hit comes from.", enum("romm", "romarr"))),
	)
}

// hitOf turns a RomM ROM into a hit (on_cabinet set later).
func hitOf(r romm.ROM, v platformView) libraryHit {
	id := r.ID
	h := libraryHit{ROMID: &id, Name: r.Name, Platform: r.PlatformSlug, BatoceraSystem: v.folder(r.PlatformID),
		Genres: nonNil(r.Genres), Files: len(r.Files), SizeBytes: r.FSSizeBytes, Source: "romm"}
	if h.Platform == "" {
		h.Platform = v.byID[r.PlatformID].Slug
	}
	if h.Name == "" {
		h.Name = r.FSName
	}
	if r.Year > 0 {
		y := r.Year
		h.Year = &y
	}
	return h
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (h libraryHit) line() string {
	s := fmt.Sprintf("%s (%s", h.Name, h.Platform)
	if h.Year != nil {
		s += fmt.Sprintf(", %d", *h.Year)
	}
	s += ")"
	if h.ROMID != nil {
		s += fmt.Sprintf(" rom_id %d", *h.ROMID)
	}
	switch {
	case h.OnCabinet != nil:
		s += fmt.Sprintf(": on the cabinet as %s game_id %s", h.OnCabinet.System, h.OnCabinet.GameID)
	case h.Source == "romarr":
		s += ": in ROMarr's library"
	case h.BatoceraSystem == nil:
		s += ": no Batocera system for this platform"
	default:
		s += ": not on the cabinet"
	}
	return s
}
