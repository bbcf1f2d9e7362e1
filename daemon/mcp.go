package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/install"
	"github.com/batocera-cabinet/cabinet/daemon/library/requests"
	"github.com/batocera-cabinet/cabinet/daemon/links"
	"github.com/batocera-cabinet/cabinet/daemon/mcpconn"
	"github.com/batocera-cabinet/cabinet/daemon/tools"
	"github.com/batocera-cabinet/cabinet/hook/store"
)

// mcpSet is the daemon's links (every client of the configuration in force, package links) and
// its MCP servers over them: the normal one and a dry-run one (for `cabinet call --dry-run`
// through the socket), rebuilt together when the configuration changes. The servers share the
// links' clients, installer and search index, the daemon's rate limits and play history. MCP
// over HTTP serves the normal one (mcpHTTP).
type mcpSet struct {
	mu     sync.Mutex
	links  *links.Links
	normal *tools.Server
	dry    *tools.Server
}

// buildLinks builds the links of cfg and the MCP servers over them, and puts them in force.
func (d *Daemon) buildLinks(cfg *Config) error {
	l, err := links.Build(cfg.Tools, notifyingInstalls{install.Kept{DB: d.eng.store()}, d.saves}, d.clock)
	if err != nil {
		return err
	}
	extra := tools.Deps{History: history{d.eng.store()}, Requests: wakingRequests{requests.Kept{DB: d.eng.store()}, d.requestsWake},
		Clock: d.clock, Daemon: d, Household: householdControls{d}, SaveSync: d.saves,
		SaveSyncWrites: cfg.SaveSync.Asked, Launched: d.launched,
		Playing: playingNow{d}}
	normal, err := l.Tools(d.opts.Version, false, extra)
	if err != nil {
		return err
	}
	dry, err := l.Tools(d.opts.Version, true, extra)
	if err != nil {
		return err
	}
	d.mcp.mu.Lock()
	d.mcp.links, d.mcp.normal, d.mcp.dry = l, normal, dry
	d.mcp.mu.Unlock()
	return nil
}

// mcpHTTP is MCP over Streamable HTTP, for serveHTTP to put behind its
// guard: mcp-go's handler of the MCP server in force, made again at the
// first request after a reload has put a new one in force (the old one's
// sessions end with it; their clients initialize again).
//
// hosts is the guard's Host allow-list (httpauth.Guard.Hosts), which
// mcp-go's own check against DNS rebinding gets as well. The handler is
// made here, not in buildLinks, because that list is only complete once
// serveHTTP has the certificate's names. Left without a list, mcp-go's
// check refuses any Host but a loopback one on a loopback connection,
// which is how cloudflared, tailscale serve or any proxy on the cabinet
// reach it with an allowed public hostname; turning the check off
// (WithDisableLocalhostProtection) turns its allow-list off too. With the
// guard's list it refuses nothing the guard lets through, and still
// refuses a foreign Host should a request ever reach it another way.
func (d *Daemon) mcpHTTP(hosts []string) (h http.Handler, closeStreams func()) {
	var (
		mu  sync.Mutex
		srv *tools.Server // the server cur serves
		cur *server.StreamableHTTPServer
	)
	closeStreams = func() {
		mu.Lock()
		c := cur
		mu.Unlock()
		if c != nil {
			c.CloseSessions(context.Background())
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := d.mcpServer(false)
		mu.Lock()
		if now != srv {
			if cur != nil {
				// The old server's subscribers hear nothing more: end their streams so they
				// come back to the new one.
				go cur.CloseSessions(context.Background())
			}
			srv, cur = now, server.NewStreamableHTTPServer(now.MCP(),
				server.WithHeartbeatInterval(30*time.Second),
				server.WithSessionIdleTTL(30*time.Minute),
				server.WithHTTPContextFunc(httpScopes), // the token's scopes, for every tool call (http.go)
				server.WithStreamableHTTPLogger(mcpLog(d.log)),
				server.WithAllowedHosts(hosts...))
		}
		serve := cur
		mu.Unlock()
		serve.ServeHTTP(w, r)
	}), closeStreams
}

// links are the clients of the configuration in force.
func (d *Daemon) links() *links.Links {
	d.mcp.mu.Lock()
	defer d.mcp.mu.Unlock()
	return d.mcp.links
}

// es is the ES client of the configuration in force (the watcher, the names cache, the
// pictures, the controls).
func (d *Daemon) es() *es.Client { return d.links().ES }

func (d *Daemon) mcpServer(dryRun bool) *tools.Server {
	d.mcp.mu.Lock()
	defer d.mcp.mu.Unlock()
	if dryRun {
		return d.mcp.dry
	}
	return d.mcp.normal
}

// invalidateGames drops the search index (a game ended: play counts moved).
func (d *Daemon) invalidateGames() {
	if l := d.links(); l != nil {
		l.Games.Invalidate()
	}
	d.favoritesChanged()
	d.resourcesChanged(tools.ResourceSystems)
}

// resourcesChanged tells the MCP clients subscribed to uris (on both servers) that they changed.
func (d *Daemon) resourcesChanged(uris ...string) {
	d.mcp.mu.Lock()
	normal, dry := d.mcp.normal, d.mcp.dry
	d.mcp.mu.Unlock()
	for _, s := range []*tools.Server{normal, dry} {
		if s != nil {
			s.ResourcesChanged(uris...)
		}
	}
}

// serveSocketMCP runs one MCP session on a socket connection (each connection its own session:
// Claude Desktop and Claude Code through `cabinet mcp`, and `cabinet call`, at the same time).
func (d *Daemon) serveSocketMCP(ctx context.Context, conn net.Conn, dryRun bool) {
	srv := d.mcpServer(dryRun)
	if srv == nil {
		return
	}
	if err := mcpconn.Serve(ctx, srv.MCP(), conn); err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, context.Canceled) {
		d.log.Debug().Err(err).Msg("socket MCP session ended")
	}
}

// DaemonHealth reports the links for batocera_get_status/get_health.
func (d *Daemon) DaemonHealth(ctx context.Context) (tools.DaemonHealth, error) {
	st := d.Status()
	h := tools.DaemonHealth{MQTTConnected: st.MQTTConnected, OutboxDepth: st.OutboxDepth, OutboxDropped: int(st.OutboxDropped)}
	if r := st.RomM; r != nil {
		h.RomM = &tools.RomMPlayReport{Delivered: r.Delivered, Waiting: r.Waiting, Unmatched: r.Unmatched}
	}
	return h, nil
}

// history serves batocera_play_history from the store's session log.
type history struct{ store *store.Store }

func (h history) Sessions(ctx context.Context, q tools.HistoryQuery) ([]tools.Session, error) {
	got, err := h.store.Sessions(store.Query{Since: q.Since, Until: q.Until, System: q.System, Limit: q.Limit})
	if err != nil {
		return nil, err
	}
	out := make([]tools.Session, len(got))
	for i, s := range got {
		out[i] = tools.Session{ID: s.ID, Game: s.Game, System: s.System, ROM: s.Rom, Started: s.Started, Ended: s.Ended, Duration: s.Duration, Source: s.Source,
			Achievements: s.Unlocks(), Profile: s.Profile}
	}
	return out, nil
}

func (h history) Achievements(ctx context.Context, q tools.HistoryQuery) ([]tools.Achievement, error) {
	got, _, err := h.store.AchievementsIn(q.Since, q.Until, q.Limit)
	if err != nil {
		return nil, err
	}
	out := make([]tools.Achievement, len(got))
	for i, a := range got {
		out[i] = tools.Achievement{ID: a.ID, Title: a.Title, Description: a.Description, Hardcore: a.Hardcore, At: a.At,
			Game: a.Game, System: a.System, SessionID: a.SessionID}
	}
	return out, nil
}

// StoreHistory serves batocera_play_history without the daemon: it opens
// the store for each query (briefly: a hook may need it next).
type StoreHistory struct{ Path string }

// Sessions implements tools.History.
func (h StoreHistory) Sessions(ctx context.Context, q tools.HistoryQuery) (out []tools.Session, err error) {
	err = withStore(h.Path, time.Second, "read play history", func(st *store.Store) error {
		out, err = history{st}.Sessions(ctx, q)
		return err
	})
	return out, err
}

// Achievements implements tools.History.
func (h StoreHistory) Achievements(ctx context.Context, q tools.HistoryQuery) (out []tools.Achievement, err error) {
	err = withStore(h.Path, time.Second, "read the achievements", func(st *store.Store) error {
		out, err = history{st}.Achievements(ctx, q)
		return err
	})
	return out, err
}

// withStore opens the store at path for one call of a command running
// without the daemon, waiting at most wait for a hook that holds it, and
// closes it again at once (a hook may need it next).
func withStore(path string, wait time.Duration, what string, fn func(*store.Store) error) error {
	st, err := store.Open(path, store.Options{LockTimeout: wait})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer st.Close()
	return fn(st)
}

// StoreInstalls keeps the install records without the daemon: it opens the
// store for each call (briefly: a hook may need it next).
type StoreInstalls struct{ Path string }

func (s StoreInstalls) with(fn func(*store.Store) error) error {
	return withStore(s.Path, 5*time.Second, "open the store for the install records", fn)
}

// PutInstall implements install.Records.
func (s StoreInstalls) PutInstall(in install.Install) error {
	return s.with(func(st *store.Store) error { return install.Kept{DB: st}.PutInstall(in) })
}

// InstallAt implements install.Records.
func (s StoreInstalls) InstallAt(path string) (in install.Install, err error) {
	err = s.with(func(st *store.Store) error { in, err = install.Kept{DB: st}.InstallAt(path); return err })
	return in, err
}

// Installs implements install.Records.
func (s StoreInstalls) Installs() (all []install.Install, err error) {
	err = s.with(func(st *store.Store) error { all, err = install.Kept{DB: st}.Installs(); return err })
	return all, err
}

// DeleteInstall implements install.Records.
func (s StoreInstalls) DeleteInstall(path string) error {
	return s.with(func(st *store.Store) error { return install.Kept{DB: st}.DeleteInstall(path) })
}

// notifyingInstalls keeps the install records and tells the save sync of each: a game installed
// from RomM brings RomM's save with it.
type notifyingInstalls struct {
	install.Kept
	saves *saveSync
}

// PutInstall implements install.Records.
func (n notifyingInstalls) PutInstall(in install.Install) error {
	if err := n.Kept.PutInstall(in); err != nil {
		return err
	}
	if n.saves != nil {
		n.saves.installed(in)
	}
	return nil
}
