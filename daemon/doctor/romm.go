package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// RomM is what the checks ask the household's RomM server (romm.Client):
// its version, which read scopes the token has (reads only) and its
// platforms.
type RomM interface {
	Version(ctx context.Context) (romm.Version, error)
	ProbeScopes(ctx context.Context) map[string]error
	Platforms(ctx context.Context) ([]romm.Platform, error)
}

// RomMEnv is cabinet.romm.* as the checks see it. URL "" means RomM is not
// configured (it is optional); Err is why cabinet.romm.* cannot make a
// client. The token itself never reaches the checks: HasToken only says
// whether one is set.
type RomMEnv struct {
	URL       string
	Client    RomM
	Err       error
	HasToken  bool
	Platforms *platforms.Map // the table with cabinet.romm.platform_map applied
}

// RomM check names: the server, its token, its platforms' folders.
const (
	CheckRomM         = "romm"
	CheckRomMAuth     = "romm-auth"
	CheckRomMPlatform = "romm-map"
)

// tokenHint is what to do about every token problem.
const tokenHint = "create a client token in RomM (Profile → Client tokens) with roms.read, platforms.read and collections.read, " +
	"write it to a file only root can read and set cabinet.romm.token_file to that file"

// wantScopes are the scopes the library tools need, in the order they are
// reported.
var wantScopes = []string{"roms.read", "platforms.read", "collections.read"}

// rommChecks are the RomM layer: one SKIP line when it is not configured,
// else the server, the token and the platform mapping.
func rommChecks(env Env) []Check {
	r := env.RomM
	if r.URL == "" {
		return []Check{{CheckRomM, func(context.Context, []Result) Result {
			return Result{Status: Skip, Detail: "cabinet.romm.url is not set (optional: the library tools need it)"}
		}}}
	}
	return []Check{
		{CheckRomM, func(ctx context.Context, _ []Result) Result { return checkRomM(ctx, r) }},
		{CheckRomMAuth, func(ctx context.Context, earlier []Result) Result {
			if Failed(earlier, CheckRomM) {
				return Result{Status: Skip, Detail: "RomM is not reachable"}
			}
			return checkRomMAuth(ctx, r)
		}},
		{CheckRomMPlatform, func(ctx context.Context, earlier []Result) Result {
			if Failed(earlier, CheckRomM) {
				return Result{Status: Skip, Detail: "RomM is not reachable"}
			}
			return checkRomMPlatforms(ctx, env, earlier)
		}},
	}
}

func checkRomM(ctx context.Context, r RomMEnv) Result {
	if r.Err != nil {
		return Result{Status: Fail, Detail: r.Err.Error(), Hint: "fix cabinet.romm.*; `cabinet config` shows every value and its source"}
	}
	v, err := r.Client.Version(ctx)
	if err != nil {
		return Result{Status: Fail, Detail: err.Error(),
			Hint: fmt.Sprintf("check cabinet.romm.url (%s): it is the address RomM's web page opens at, such as http://romm.lan:8080; and check that RomM runs and the cabinet can reach it", r.URL)}
	}
	at := fmt.Sprintf("RomM %s answers at %s", v, r.URL)
	switch {
	case !v.AtLeast(4, 0):
		return Result{Status: Fail, Detail: at + ", older than 4.0, which the cabinet needs", Hint: "upgrade RomM (the cabinet is checked against RomM 4.8 to 5.3)"}
	case r.HasToken && !v.AtLeast(4, 8):
		return Result{Status: Fail, Detail: at + ", older than 4.8, the first RomM with client tokens",
			Hint: "upgrade RomM to 4.8 or newer (the cabinet is checked against 4.8 to 5.3)"}
	case v.Development:
		return Result{Status: Warn, Detail: at + " (a development build; the cabinet is checked against RomM 4.8 to 5.3)",
			Hint: "the library tools use it best effort: if one misbehaves, run a RomM release from 4.8 to 5.3 or update Cabinet"}
	case !v.Verified():
		return Result{Status: Warn, Detail: at + "; the cabinet is checked against RomM 4.8 to 5.3",
			Hint: "the library tools use it best effort: if one misbehaves, run RomM 4.8 to 5.3 or update Cabinet"}
	}
	return Result{Status: OK, Detail: at}
}

// checkRomMAuth tries one read per scope the library tools need.
func checkRomMAuth(ctx context.Context, r RomMEnv) Result {
	got := r.Client.ProbeScopes(ctx)
	var works, lacks, facts []string
	var refused, other error
	for _, s := range scopeOrder(got) {
		err := got[s]
		switch {
		case err == nil:
			works = append(works, s)
			facts = append(facts, s+": works")
			continue
		case errors.Is(err, romm.ErrMissingScope):
			lacks = append(lacks, s)
		case errors.Is(err, romm.ErrUnauthorized):
			refused = err
			lacks = append(lacks, s)
		default:
			if other == nil {
				other = err
			}
		}
		facts = append(facts, s+": "+err.Error())
	}
	switch {
	case other != nil:
		return Result{Status: Fail, Detail: other.Error(), Hint: "try again; if it persists, check RomM's log", Facts: facts}
	case len(lacks) == 0 && !r.HasToken:
		return Result{Status: OK, Detail: "RomM answers without a token (kiosk mode): " + strings.Join(works, ", ") + " work", Facts: facts}
	case len(lacks) == 0:
		return Result{Status: OK, Detail: "the token works with " + strings.Join(works, ", "), Facts: facts}
	case !r.HasToken:
		return Result{Status: Fail, Detail: "RomM wants a token and cabinet.romm.token is empty", Hint: tokenHint, Facts: facts}
	case len(works) == 0 && refused != nil:
		// Every read refused: a wrong, expired or revoked token (RomM up to
		// 5.1 answers 403 for a token without the scopes too).
		return Result{Status: Fail, Detail: "RomM refused the token for every read (" + strings.Join(lacks, ", ") + ")", Hint: tokenHint, Facts: facts}
	case len(works) == 0:
		return Result{Status: Fail, Detail: "RomM accepts the token, but it has none of " + strings.Join(lacks, ", "), Hint: tokenHint, Facts: facts}
	}
	res := Result{Status: Warn, Detail: fmt.Sprintf("the token works with %s but lacks %s", strings.Join(works, ", "), strings.Join(lacks, ", ")),
		Hint: "the tools that need " + strings.Join(lacks, ", ") + " fail meanwhile: " + tokenHint, Facts: facts}
	if slices.Contains(lacks, "roms.read") {
		res.Status = Fail // library_search and romm_get_rom need it
	}
	return res
}

// scopeOrder is the probed scopes: the known ones first, in their order.
func scopeOrder(got map[string]error) []string {
	var out, rest []string
	for _, s := range wantScopes {
		if _, ok := got[s]; ok {
			out = append(out, s)
		}
	}
	for s := range got {
		if !slices.Contains(wantScopes, s) {
			rest = append(rest, s)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// maxNamed is how many unmapped platforms the detail names; --verbose
// shows them all.
const maxNamed = 6

// checkRomMPlatforms maps RomM's platforms to the systems ES lists, the
// way the library tools do.
func checkRomMPlatforms(ctx context.Context, env Env, earlier []Result) Result {
	r := env.RomM
	list, err := r.Client.Platforms(ctx)
	switch {
	case errors.Is(err, romm.ErrMissingScope) || errors.Is(err, romm.ErrUnauthorized):
		return Result{Status: Skip, Detail: "the token cannot read RomM's platforms (see romm-auth)"}
	case err != nil:
		return Result{Status: Fail, Detail: err.Error(), Hint: "try again; if it persists, check RomM's log"}
	case len(list) == 0:
		return Result{Status: Warn, Detail: "RomM lists no platforms", Hint: "scan RomM's library (its Scan page) so it finds the ROMs of its library folder"}
	}
	if Failed(earlier, CheckES) {
		return Result{Status: Skip, Detail: fmt.Sprintf("RomM has %d platforms; their mapping to this cabinet's systems was not checked: EmulationStation is not reachable", len(list))}
	}
	systems, err := env.ES.Systems(ctx)
	if err != nil {
		return Result{Status: Skip, Detail: fmt.Sprintf("RomM has %d platforms; their mapping to this cabinet's systems was not checked: %v", len(list), err)}
	}
	listed := map[string]bool{}
	for _, s := range es.GameSystems(systems) {
		listed[s.Name] = true
	}
	m := r.Platforms
	if m == nil {
		m = platforms.Default()
	}
	var mapped int
	var unknown, absent, facts []string
	for _, p := range list {
		name := platformName(p)
		if f, ok := m.Folder(p.Slug, p.FSSlug, listed); ok {
			mapped++
			facts = append(facts, fmt.Sprintf("%s → %s", name, f))
			continue
		}
		if f, ok := m.Folder(p.Slug, p.FSSlug, nil); ok {
			absent = append(absent, name)
			facts = append(facts, fmt.Sprintf("%s → %s, which ES does not list here", name, f))
			continue
		}
		unknown = append(unknown, name)
		facts = append(facts, fmt.Sprintf("%s → no Batocera folder", name))
	}
	detail := fmt.Sprintf("%d of %d RomM platforms map to systems ES lists", mapped, len(list))
	if len(absent) > 0 {
		detail += fmt.Sprintf("; %d to systems this cabinet has no games for (%s)", len(absent), named(absent))
	}
	if len(unknown) == 0 {
		return Result{Status: OK, Detail: detail, Facts: facts}
	}
	detail += fmt.Sprintf("; %d to no Batocera folder: %s", len(unknown), named(unknown))
	return Result{Status: Warn, Detail: detail,
		Hint: "the library tools cannot say whether their games are on the cabinet; if Batocera has a system for one, map it with " +
			"cabinet.romm.platform_map=<romm slug>:<batocera folder>,… (such as sfam:snes)",
		Facts: facts}
}

// platformName is "Super Famicom (sfam)": the name and the slug
// platform_map takes.
func platformName(p romm.Platform) string {
	slug := p.FSSlug
	if slug == "" {
		slug = p.Slug
	}
	name := untrusted.Clean(p.Name, 60)
	if name == "" {
		return untrusted.Clean(slug, 40)
	}
	return fmt.Sprintf("%s (%s)", name, untrusted.Clean(slug, 40))
}

// named lists at most maxNamed names.
func named(names []string) string {
	if len(names) <= maxNamed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamed], ", "), len(names)-maxNamed)
}
