package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// ROMarr is what the romarr_* tools ask ROMarr; *romarr.Client. Its
// results are cleaned already.
type ROMarr interface {
	Status(ctx context.Context) (romarr.Status, error)
	Wanted(ctx context.Context, platform string, limit int) ([]romarr.Wanted, error)
	Queue(ctx context.Context) ([]romarr.QueueItem, error)
	RequestGame(ctx context.Context, game, platform string) (romarr.RequestResult, error)
	Search(ctx context.Context, query string, limit int) ([]romarr.LibraryItem, error)
}

// romarrFailure turns a ROMarr error into a refusal that says what to do,
// logged as ROMarr's error.
func romarrFailure(what string, err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, context.DeadlineExceeded):
		return failedAt(loggerROMarr, mcp.LoggingLevelError, "Could not %s: ROMarr did not answer in time; it may be busy. Retry in a moment.", what)
	}
	// The client's errors say what to do already (the key, the URL) and
	// never carry the API key.
	return failedAt(loggerROMarr, mcp.LoggingLevelError, "Could not %s: %s", what, untrusted.Clean(err.Error(), maxErrorRunes))
}

// dateText renders a time for a result; "" for the zero time.
func dateText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

type romarrStatusResult struct {
	Reachable       bool                  `json:"reachable"`
	Version         string                `json:"version"`
	Indexers        int                   `json:"indexers"`
	DownloadClients []romarrDownloadState `json:"download_clients"`
	LibraryOK       bool                  `json:"library_ok"`
	RommLinked      bool                  `json:"romm_linked"`
	Wanted          int                   `json:"wanted"`
	Queued          int                   `json:"queued"`
	Warnings        []string              `json:"warnings"`
}

type romarrDownloadState struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
}

func romarrStatusTool(r ROMarr) (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("romarr_status", "ROMarr status",
		"ROMarr's health: its version, how many indexers and download clients it has and whether they work, whether "+
			"its library (RomM or a folder) answers, and how many games are wanted or queued. Without indexers ROMarr "+
			"cannot find any game.",
		reads, true,
		withOutput(
			req("reachable", boolean("ROMarr answered.")),
			req("version", str("ROMarr's version.")),
			req("indexers", integer("Indexers ROMarr searches.")),
			req("download_clients", array("Download clients and whether each works.", object("",
				req("name", str("Client name.")), req("ok", boolean("It answers."))))),
			req("library_ok", boolean("ROMarr's library (RomM or a folder) answers.")),
			req("romm_linked", boolean("ROMarr imports into a RomM server.")),
			req("wanted", integer("Games on ROMarr's wanted list.")),
			req("queued", integer("Downloads queued or grabbed.")),
			req("warnings", array("What stops ROMarr from getting games.", str("One warning."))),
		))
	return t, typed(func(ctx context.Context, _ none) (romarrStatusResult, error) {
		st, err := r.Status(ctx)
		if err != nil {
			return romarrStatusResult{}, romarrFailure("read ROMarr's status", err)
		}
		res := romarrStatusResult{Reachable: true, Version: st.Version, Indexers: st.Indexers, LibraryOK: st.LibraryOK,
			RommLinked: st.RommOK, Wanted: st.Wanted, Queued: st.Queued, DownloadClients: []romarrDownloadState{}, Warnings: []string{}}
		for _, d := range st.DownloadClients {
			res.DownloadClients = append(res.DownloadClients, romarrDownloadState{Name: d.Name, OK: d.OK})
		}
		if st.Indexers == 0 {
			res.Warnings = append(res.Warnings, "ROMarr has no indexers: a request is recorded as wanted but no release can be found until one is added in ROMarr.")
		}
		if len(st.DownloadClients) == 0 {
			res.Warnings = append(res.Warnings, "ROMarr has no download client: it cannot fetch a release.")
		}
		if !st.LibraryOK {
			res.Warnings = append(res.Warnings, "ROMarr's library does not answer: imported games have nowhere to go.")
		}
		return res, nil
	})
}

func (r romarrStatusResult) text() string {
	s := fmt.Sprintf("ROMarr %s: %d indexer(s), %d download client(s), library %s; %d wanted, %d queued.",
		r.Version, r.Indexers, len(r.DownloadClients), okText(r.LibraryOK), r.Wanted, r.Queued)
	for _, w := range r.Warnings {
		s += "\nWarning: " + w
	}
	return s
}

func okText(ok bool) string {
	if ok {
		return "ok"
	}
	return "not answering"
}

type romarrWantedArgs struct {
	Platform string `json:"platform"`
	Limit    int    `json:"limit"`
}

type romarrWantedResult struct {
	Wanted []romarrWantedItem `json:"wanted"`
}

type romarrWantedItem struct {
	Title     string `json:"title"`
	Platform  string `json:"platform"`
	Added     string `json:"added"`
	Attempts  int    `json:"attempts"`
	LastError string `json:"last_error"`
}

func romarrWantedTool(r ROMarr) (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("romarr_wanted", "ROMarr wanted list",
		"The games ROMarr is still looking for, newest first: title, platform, when it was asked for, how many "+
			"searches failed and why the last one did.",
		reads, true,
		withInput(
			opt("platform", str("Only this platform: a Batocera system folder (snes) or ROMarr's own platform slug.", maxLen(maxIdent))),
			opt("limit", integer("How many, newest first.", minimum(1), maximum(romarr.MaxLimit), defaultValue(romarr.DefaultLimit))),
		),
		withOutput(req("wanted", array("Wanted games, newest first.", object("",
			req("title", str("The game.")), req("platform", str("ROMarr's platform.")),
			req("added", str("When it was asked for (RFC 3339), or empty.")),
			req("attempts", integer("Searches so far.")),
			req("last_error", str("Why the last search found nothing, or empty.")),
		)))))
	return t, typed(func(ctx context.Context, a romarrWantedArgs) (romarrWantedResult, error) {
		platform := a.Platform
		if slug, ok := romarr.PlatformFor(platform); ok {
			platform = slug
		}
		limit := a.Limit
		if limit <= 0 {
			limit = romarr.DefaultLimit
		}
		items, err := r.Wanted(ctx, platform, limit)
		if err != nil {
			return romarrWantedResult{}, romarrFailure("read ROMarr's wanted list", err)
		}
		res := romarrWantedResult{Wanted: []romarrWantedItem{}}
		for _, w := range items {
			res.Wanted = append(res.Wanted, romarrWantedItem{Title: w.Title, Platform: w.Platform, Added: dateText(w.Added),
				Attempts: w.Attempts, LastError: w.LastError})
		}
		return res, nil
	})
}

func (r romarrWantedResult) text() string {
	if len(r.Wanted) == 0 {
		return "ROMarr is not looking for any game."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d wanted:", len(r.Wanted))
	for _, w := range r.Wanted {
		fmt.Fprintf(&b, "\n- %s (%s), %d search(es)", w.Title, w.Platform, w.Attempts)
		if w.LastError != "" {
			fmt.Fprintf(&b, ": %s", w.LastError)
		}
	}
	return b.String()
}

type romarrQueueResult struct {
	Queue []romarrQueueItem `json:"queue"`
}

type romarrQueueItem struct {
	Title    string `json:"title"`
	Platform string `json:"platform"`
	Release  string `json:"release"`
	State    string `json:"state"`
	Detail   string `json:"detail"`
	At       string `json:"at"`
}

func romarrQueueTool(r ROMarr) (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("romarr_queue", "ROMarr queue",
		"ROMarr's downloads, newest first (at most 100): the release it picked, its state (queued, grabbed, imported, "+
			"failed) and what went wrong.",
		reads, true,
		withOutput(req("queue", array("Downloads, newest first.", object("",
			req("title", str("The game.")), req("platform", str("ROMarr's platform.")),
			req("release", str("The release ROMarr picked, or empty.")),
			req("state", str("queued, grabbed, imported, failed… as ROMarr says.")),
			req("detail", str("What happened, as ROMarr says, or empty.")),
			req("at", str("When (RFC 3339), or empty.")),
		)))))
	return t, typed(func(ctx context.Context, _ none) (romarrQueueResult, error) {
		items, err := r.Queue(ctx)
		if err != nil {
			return romarrQueueResult{}, romarrFailure("read ROMarr's queue", err)
		}
		res := romarrQueueResult{Queue: []romarrQueueItem{}}
		for _, q := range items {
			res.Queue = append(res.Queue, romarrQueueItem{Title: q.Title, Platform: q.Platform, Release: q.Release,
				State: q.State, Detail: q.Detail, At: dateText(q.At)})
		}
		return res, nil
	})
}

func (r romarrQueueResult) text() string {
	if len(r.Queue) == 0 {
		return "ROMarr's queue is empty."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d in the queue:", len(r.Queue))
	for _, q := range r.Queue {
		fmt.Fprintf(&b, "\n- %s (%s): %s", q.Title, q.Platform, q.State)
		if q.Detail != "" {
			fmt.Fprintf(&b, ", %s", q.Detail)
		}
	}
	return b.String()
}

type romarrRequestArgs struct {
	Game     string `json:"game"`
	Platform string `json:"platform"`
}

func romarrRequestTool(r ROMarr, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("romarr_request_game", "Ask ROMarr for a game",
		"Ask ROMarr to find a game and import it into the household's library. platform is a Batocera system folder "+
			"(snes, megadrive…) or ROMarr's own slug. When ROMarr finds no release the answer says so; the game stays "+
			"on its wanted list and is searched again later. Nothing is downloaded to the cabinet.",
		writes, false,
		withInput(
			req("game", str("The game's title.", minLen(1), maxLen(romarr.MaxGameName))),
			req("platform", str("Batocera system folder or ROMarr platform slug.", minLen(1), maxLen(maxIdent))),
		),
		withOutput(actionProps()...))
	return t, typed(func(ctx context.Context, a romarrRequestArgs) (ActionResult, error) {
		game := untrusted.Clean(a.Game, romarr.MaxGameName)
		if game == "" {
			return ActionResult{}, refuse("Give the game's title: nothing visible is left once invisible characters are removed.")
		}
		platform := untrusted.Clean(a.Platform, maxIdent)
		var warnings []string
		if slug, ok := romarr.PlatformFor(platform); ok && slug != platform {
			warnings = append(warnings, fmt.Sprintf("The Batocera folder %s is ROMarr's platform %s.", platform, slug))
			platform = slug
		}
		sent := fmt.Sprintf("POST /api/request game=%q platform=%q", game, platform)
		var res romarr.RequestResult
		dry, err := g.run(ctx, action{what: "ask ROMarr for a game", budget: budgetNone, sent: []string{sent},
			send: func(ctx context.Context) error {
				var err error
				res, err = r.RequestGame(ctx, game, platform)
				return err
			}})
		if err != nil {
			var rf *refusal
			if errors.As(err, &rf) {
				return ActionResult{}, err
			}
			return ActionResult{}, romarrFailure("ask ROMarr for "+game, err)
		}
		if dry {
			return actionResult(cabinet, outcomeDryRun, fmt.Sprintf("Would ask ROMarr for %s (%s).", game, platform), []string{sent}, warnings), nil
		}
		if !res.OK {
			why := res.Error
			if why == "" {
				why = "it gave no reason"
			}
			return actionResult(cabinet, outcomeDone, fmt.Sprintf("ROMarr found no release of %s (%s): %s. It stays on ROMarr's "+
				"wanted list and is searched again later.", game, platform, why), []string{sent}, warnings), nil
		}
		detail := fmt.Sprintf("ROMarr is fetching %s (%s)", game, platform)
		if res.Release != "" {
			detail += ": " + res.Release
		}
		return actionResult(cabinet, outcomeDone, detail+". It appears in the library once imported (romarr_queue shows progress).",
			[]string{sent}, warnings), nil
	})
}
