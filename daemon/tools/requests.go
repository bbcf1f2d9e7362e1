package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/library/requests"
	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/daemon/tools/search"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// RequestStore keeps the library requests (the daemon's store, or one opened per call).
type RequestStore interface {
	PutRequest(requests.Request) error
	UpdateRequest(id string, fn func(*requests.Request) error) error
	Requests() ([]requests.Request, error)
}

type libraryRequestArgs struct {
	Game     string `json:"game"`
	Platform string `json:"platform"`
	Install  bool   `json:"install"`
}

// LibraryRequestResult is library_request's answer: the action result and the request.
type LibraryRequestResult struct {
	ActionResult
	RequestID *string `json:"request_id"`
	State     *string `json:"state"`
}

func (r LibraryRequestResult) text() string {
	s := r.ActionResult.text()
	if r.RequestID != nil {
		s += fmt.Sprintf("\nRequest %s: %s.", *r.RequestID, *r.State)
	}
	return s
}

// requestDeps are what library_request uses.
type requestDeps struct {
	lib     Library
	store   RequestStore
	guard   *guard
	clock   Clock
	cabinet string
	daemon  bool // the daemon serves the tools: it follows the request
}

func libraryRequestTool(d requestDeps) (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("library_request", "Ask for a game and follow it",
		"Ask ROMarr to find a game and import it into the household's library, and have the cabinet follow the "+
			"request until RomM lists the game; with install: true the cabinet then installs it and says on its screen "+
			"that it is ready to play. platform is a Batocera system folder (snes, megadrive…) or ROMarr's own slug. "+
			"Asking again for a game already followed changes nothing (or adds the install). library_requests shows "+
			"where each request stands; ROMarr can take hours or days to find a release.",
		writes, false,
		withInput(
			req("game", str("The game's title.", minLen(1), maxLen(romarr.MaxGameName))),
			req("platform", str("Batocera system folder or ROMarr platform slug.", minLen(1), maxLen(maxIdent))),
			opt("install", boolean("Install the game on the cabinet once it is in RomM (needs cabinet.library.allow_install).")),
		),
		withOutput(actionProps(
			req("request_id", nullable(str("The request's id (library_requests); null in a dry run."))),
			req("state", nullable(str("Where the request stands; null in a dry run.", enum(requests.States()...)))),
		)...))
	return t, typed(func(ctx context.Context, a libraryRequestArgs) (LibraryRequestResult, error) {
		return d.request(ctx, a)
	})
}

func (d requestDeps) request(ctx context.Context, a libraryRequestArgs) (LibraryRequestResult, error) {
	game := untrusted.Clean(a.Game, romarr.MaxGameName)
	if game == "" {
		return LibraryRequestResult{}, refuse("Give the game's title: nothing visible is left once invisible characters are removed.")
	}
	platform := untrusted.Clean(a.Platform, maxIdent)
	if platform == "" {
		return LibraryRequestResult{}, refuse("Give the platform: a Batocera system folder such as snes or megadrive.")
	}
	if a.Install && d.lib.Installer == nil {
		return LibraryRequestResult{}, refuse("Installing is off on this cabinet: set cabinet.library.allow_install=true (with cabinet.romm.url) " +
			"to have requested games installed, or ask without install and install the game later with library_install.")
	}
	var warnings []string
	system := ""
	if slug, ok := romarr.PlatformFor(platform); ok {
		system = platform
		if slug != platform {
			warnings = append(warnings, fmt.Sprintf("The Batocera folder %s is ROMarr's platform %s.", platform, slug))
		}
		platform = slug
	} else if d.lib.Platforms != nil && d.lib.Platforms.Known(platform) {
		system = platform
	}
	all, err := d.store.Requests()
	if err != nil {
		return LibraryRequestResult{}, refuse("Could not read the library requests: %s", untrusted.Clean(err.Error(), maxErrorRunes))
	}
	open := 0
	var arrived *requests.Request // the newest request of the game that reached RomM
	for i, r := range all {
		same := strings.EqualFold(r.Platform, platform) && search.Fold(r.Game) == search.Fold(game)
		switch {
		case r.Open() && same:
			return d.again(r, a.Install, warnings)
		case r.Open():
			open++
		case same && arrived == nil && r.ROMID > 0 && (r.State == requests.StateInRomM || r.State == requests.StateInstalled):
			arrived = &all[i]
		}
	}
	if open >= requests.MaxOpen {
		return LibraryRequestResult{}, refuse("%s", requests.ErrTooMany.Error())
	}
	if arrived != nil {
		return d.inRomM(*arrived, a.Install, warnings)
	}
	if d.lib.RomM == nil {
		warnings = append(warnings, "Cabinet has no RomM server (cabinet.romm.url): it follows the request only until ROMarr imports it.")
	}
	if !d.daemon {
		warnings = append(warnings, "cabinet serve is not running: the request is followed once it runs.")
	}
	then := "until RomM lists it"
	if a.Install {
		then += ", then installs it"
	}
	sent := fmt.Sprintf("POST /api/request game=%q platform=%q", game, platform)
	var res romarr.RequestResult
	var askErr error
	dry, err := d.guard.run(ctx, action{what: "ask ROMarr for a game", budget: budgetNone, sent: []string{sent},
		send: func(ctx context.Context) error {
			res, askErr = d.lib.ROMarr.RequestGame(ctx, game, platform)
			if errors.Is(askErr, context.DeadlineExceeded) && ctx.Err() == nil {
				return nil // ROMarr's own timeout: it may well still be searching, recorded as pending
			}
			return askErr
		}})
	if err != nil {
		var rf *refusal
		if errors.As(err, &rf) {
			return LibraryRequestResult{}, err
		}
		return LibraryRequestResult{}, romarrFailure("ask ROMarr for "+game, err)
	}
	if dry {
		return LibraryRequestResult{ActionResult: actionResult(d.cabinet, outcomeDryRun,
			fmt.Sprintf("Would ask ROMarr for %s (%s) and follow the request %s.", game, platform, then), []string{sent}, warnings)}, nil
	}
	state, detail := requests.StateDownloading, ""
	switch {
	case askErr != nil:
		state, detail = requests.StatePending, "ROMarr did not answer in time; it may still be searching."
		warnings = append(warnings, "ROMarr did not answer in time: Cabinet recorded the request and looks for it in ROMarr's queue.")
	case !res.OK && strings.HasPrefix(res.Error, "unknown platform"):
		return LibraryRequestResult{}, refuse("ROMarr does not know the platform %q (%s): name a Batocera system folder such as snes or megadrive, "+
			"or ROMarr's own slug. Nothing was recorded.", platform, res.Error)
	case !res.OK:
		state = requests.StateSearching
		detail = fmt.Sprintf("ROMarr has found no usable release yet (%s); it searches again on its own schedule.", res.Error)
	case res.Release != "":
		detail = fmt.Sprintf("ROMarr handed %s to its download client.", res.Release)
	default:
		detail = "ROMarr handed a release to its download client."
	}
	now := d.clock.Now()
	rec := requests.Request{ID: requests.NewID(now), Game: game, Platform: platform, System: system, Install: a.Install,
		State: state, Detail: untrusted.Clean(detail, 300), Release: res.Release, CreatedAt: now, UpdatedAt: now, NextCheck: now}
	if err := d.store.PutRequest(rec); err != nil {
		if errors.Is(err, requests.ErrTooMany) {
			return LibraryRequestResult{}, refuse("ROMarr has the request, but Cabinet does not follow it: %s", err.Error())
		}
		return LibraryRequestResult{}, refuse("ROMarr has the request, but Cabinet could not record it to follow it (%s): ask again "+
			"later (ROMarr takes a second request as a retry).", untrusted.Clean(err.Error(), maxErrorRunes))
	}
	var said string
	switch state {
	case requests.StateDownloading:
		said = fmt.Sprintf("ROMarr is fetching %s (%s)", game, platform)
		if res.Release != "" {
			said += ": " + res.Release
		}
		said += "."
	case requests.StateSearching:
		said = fmt.Sprintf("ROMarr found no release of %s (%s) yet: %s. It stays on ROMarr's wanted list.", game, platform, res.Error)
	default:
		said = fmt.Sprintf("Asked ROMarr for %s (%s); it did not answer in time.", game, platform)
	}
	said += fmt.Sprintf(" Cabinet follows the request %s (library_requests shows where it stands).", then)
	return LibraryRequestResult{ActionResult: actionResult(d.cabinet, outcomeDone, said, []string{sent}, warnings),
		RequestID: &rec.ID, State: &rec.State}, nil
}

// again answers a request for a game already followed: unchanged, or with the install added.
func (d requestDeps) again(r requests.Request, installIt bool, warnings []string) (LibraryRequestResult, error) {
	id, state := r.ID, r.State
	name := fmt.Sprintf("%s (%s)", untrusted.Clean(r.Game, 100), untrusted.Clean(r.Platform, maxIdent))
	if !installIt || r.Install {
		return LibraryRequestResult{ActionResult: actionResult(d.cabinet, outcomeUnchanged,
			fmt.Sprintf("Cabinet follows %s already: %s. %s", name, state, untrusted.Clean(r.Detail, 300)), nil, warnings),
			RequestID: &id, State: &state}, nil
	}
	if d.guard.dryRun {
		return LibraryRequestResult{ActionResult: actionResult(d.cabinet, outcomeDryRun,
			fmt.Sprintf("Would install %s once it is in RomM (Cabinet follows it already: %s).", name, state), nil, warnings)}, nil
	}
	if err := d.store.UpdateRequest(r.ID, func(q *requests.Request) error {
		q.Install = true
		if q.State == requests.StateInRomM {
			q.NextCheck = d.clock.Now()
		}
		return nil
	}); err != nil {
		return LibraryRequestResult{}, refuse("Could not change the request: %s", untrusted.Clean(err.Error(), maxErrorRunes))
	}
	return LibraryRequestResult{ActionResult: actionResult(d.cabinet, outcomeDone,
		fmt.Sprintf("Cabinet follows %s already (%s); it now installs it once it is in RomM.", name, state), nil, warnings),
		RequestID: &id, State: &state}, nil
}

// inRomM answers a request for a game an earlier request brought into RomM: ROMarr is not asked
// again (it would fetch the game a second time); with install, a new request installs it.
func (d requestDeps) inRomM(r requests.Request, installIt bool, warnings []string) (LibraryRequestResult, error) {
	name := fmt.Sprintf("%s (%s)", untrusted.Clean(r.Game, 100), untrusted.Clean(r.Platform, maxIdent))
	if !installIt {
		id, state := r.ID, r.State
		return LibraryRequestResult{ActionResult: actionResult(d.cabinet, outcomeUnchanged,
			fmt.Sprintf("%s is in RomM already (rom_id %d): library_install rom_id=%d puts it on the cabinet.", name, r.ROMID, r.ROMID),
			nil, warnings), RequestID: &id, State: &state}, nil
	}
	if d.guard.dryRun {
		return LibraryRequestResult{ActionResult: actionResult(d.cabinet, outcomeDryRun,
			fmt.Sprintf("Would install %s, which is in RomM already (rom_id %d).", name, r.ROMID), nil, warnings)}, nil
	}
	now := d.clock.Now()
	rec := requests.Request{ID: requests.NewID(now), Game: r.Game, Platform: r.Platform, System: r.System, Install: true,
		State: requests.StateInRomM, Detail: fmt.Sprintf("In RomM already (rom_id %d).", r.ROMID), Release: r.Release, ROMID: r.ROMID,
		CreatedAt: now, UpdatedAt: now, NextCheck: now}
	if err := d.store.PutRequest(rec); err != nil {
		return LibraryRequestResult{}, refuse("Could not record the request: %s", untrusted.Clean(err.Error(), maxErrorRunes))
	}
	return LibraryRequestResult{ActionResult: actionResult(d.cabinet, outcomeDone,
		fmt.Sprintf("%s is in RomM already (rom_id %d): Cabinet installs it now, without asking ROMarr again.", name, r.ROMID),
		nil, warnings), RequestID: &rec.ID, State: &rec.State}, nil
}

type libraryRequestsArgs struct {
	OpenOnly bool `json:"open_only"`
	Limit    int  `json:"limit"`
}

type libraryRequestsResult struct {
	Requests []requestItem `json:"requests"`
	Open     int           `json:"open"`
}

type requestItem struct {
	RequestID string `json:"request_id"`
	Game      string `json:"game"`
	Platform  string `json:"platform"`
	Install   bool   `json:"install"`
	State     string `json:"state"`
	Detail    string `json:"detail"`
	ROMID     *int   `json:"rom_id"`
	Created   string `json:"created"`
	Updated   string `json:"updated"`
	Followed  bool   `json:"followed"`
}

const (
	requestsDefaultLimit = 50
	requestsMaxLimit     = requests.MaxOpen
)

func libraryRequestsTool(rs RequestStore) (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("library_requests", "Library requests",
		"The games asked for with library_request, newest first, and where each stands: pending, searching (ROMarr has "+
			"no release yet), downloading, importing (ROMarr filed it, RomM does not list it yet), in_romm, installed, "+
			"failed or expired (followed for a week at most). followed says whether the cabinet still checks it.",
		reads, true,
		withInput(
			opt("open_only", boolean("Only the requests still followed.")),
			opt("limit", integer("How many, newest first.", minimum(1), maximum(requestsMaxLimit), defaultValue(requestsDefaultLimit))),
		),
		withOutput(
			req("requests", array("Requests, newest first.", object("",
				req("request_id", str("The request's id.")),
				req("game", str("The game asked for.")),
				req("platform", str("ROMarr's platform.")),
				req("install", boolean("It is installed on the cabinet once in RomM.")),
				req("state", str("Where it stands.", enum(requests.States()...))),
				req("detail", str("Why, in a sentence.")),
				req("rom_id", nullable(integer("RomM's ROM id once RomM lists it."))),
				req("created", str("When it was asked for (RFC 3339).")),
				req("updated", str("When its state last changed (RFC 3339).")),
				req("followed", boolean("The cabinet still checks it.")),
			))),
			req("open", integer("Requests still followed.")),
		))
	return t, typed(func(ctx context.Context, a libraryRequestsArgs) (libraryRequestsResult, error) {
		all, err := rs.Requests()
		if err != nil {
			return libraryRequestsResult{}, refuse("Could not read the library requests: %s", untrusted.Clean(err.Error(), maxErrorRunes))
		}
		limit := a.Limit
		if limit <= 0 {
			limit = requestsDefaultLimit
		}
		res := libraryRequestsResult{Requests: []requestItem{}}
		for _, r := range all {
			open := r.Open()
			if open {
				res.Open++
			}
			if (a.OpenOnly && !open) || len(res.Requests) >= min(limit, requestsMaxLimit) {
				continue
			}
			it := requestItem{RequestID: untrusted.Clean(r.ID, maxIdent), Game: untrusted.Clean(r.Game, romarr.MaxGameName),
				Platform: untrusted.Clean(r.Platform, maxIdent), Install: r.Install, State: r.State,
				Detail: untrusted.Clean(r.Detail, 300), Created: dateText(r.CreatedAt), Updated: dateText(r.UpdatedAt), Followed: open}
			if r.ROMID > 0 {
				id := r.ROMID
				it.ROMID = &id
			}
			res.Requests = append(res.Requests, it)
		}
		return res, nil
	})
}

func (r libraryRequestsResult) text() string {
	if len(r.Requests) == 0 {
		return "No library requests."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d request(s), %d followed:", len(r.Requests), r.Open)
	for _, q := range r.Requests {
		fmt.Fprintf(&b, "\n- %s (%s): %s", q.Game, q.Platform, q.State)
		if q.Detail != "" {
			fmt.Fprintf(&b, ". %s", q.Detail)
		}
	}
	return b.String()
}
