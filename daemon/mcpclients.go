package daemon

import (
	"context"
	"os"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/oauth"
	"github.com/batocera-cabinet/cabinet/haentities"
)

const (
	// mcpClientsSettle lets a sign-in's writes of the clients' file (the
	// approval, the code exchange, the first request) go out as one
	// publish: the first change of a burst publishes this long after it.
	mcpClientsSettle = 2 * time.Second
	// mcpClientsPoll is how often the file is looked at (a stat) for the
	// changes of another process (`cabinet clients revoke`, `unlock`) and
	// for a sign-in that ended. The state dir is not watched: its log and
	// store are written all the time, and those commands are rare.
	mcpClientsPoll = time.Minute
	// racyStat: a file changed this close to a look may change again
	// without its stat changing (FAT keeps modification times to 2 s).
	racyStat = 3 * time.Second
)

// msgMCPClientsChanged is logged (debug) when the authorization server
// changed the clients' file and a publish is armed.
const msgMCPClientsChanged = "MCP clients changed"

// mcpClients publishes sensor.batocera_mcp_clients (the clients signed in
// through the cabinet's OAuth server) while sign-in is on.
type mcpClients struct {
	d     *Daemon
	wake  chan struct{}
	shown shownStates
}

func newMCPClients(d *Daemon) *mcpClients {
	return &mcpClients{d: d, wake: make(chan struct{}, 1)}
}

// changed is told by the authorization server after it changed the file
// (oauth.Config.OnChange), in the writer's goroutine: it never blocks, a
// wake already waiting covers this one.
func (m *mcpClients) changed() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// fileLook is what a stat says of the clients' file.
type fileLook struct {
	fi os.FileInfo // nil: missing or unreadable
	at time.Time   // wall clock, as the file system's times are
}

func lookAt(path string) fileLook {
	fi, _ := os.Stat(path)
	return fileLook{fi: fi, at: time.Now()}
}

// differs says whether the file may have changed since l: it was replaced
// (the writers rename a new file over it), written, or looked at too soon
// after a change to tell.
func (l fileLook) differs(now fileLook) bool {
	if l.fi == nil || now.fi == nil {
		return (l.fi == nil) != (now.fi == nil)
	}
	return !os.SameFile(l.fi, now.fi) || !l.fi.ModTime().Equal(now.fi.ModTime()) || l.fi.Size() != now.fi.Size() ||
		l.at.Sub(l.fi.ModTime()) < racyStat
}

// run publishes at start, a moment after the authorization server changed
// the file, and at the poll when the file changed on disk, a sign-in has
// ended since, or the settings changed (a reload turned sign-in on or
// off, or moved the topics).
func (m *mcpClients) run(ctx context.Context) error {
	path := m.d.config().Layout.OAuth() // the server's, until a restart
	tick, tc := m.d.clock.NewTicker(mcpClientsPoll)
	defer tick.Stop()
	settle, settleC := m.d.clock.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	armed := false
	last, settings, due := m.report(path)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-m.wake:
			if !armed {
				armed = true
				settle.Reset(mcpClientsSettle)
				m.d.log.Debug().Msg(msgMCPClientsChanged)
			}
		case <-settleC:
			armed = false
			last, settings, due = m.report(path)
		case <-tc:
			if last.differs(lookAt(path)) || settings != m.d.eng.currentRules().Settings ||
				(!due.IsZero() && !m.d.clock.Now().Before(due)) {
				last, settings, due = m.report(path)
			}
		}
	}
}

// report publishes the sensor when it changed, and returns the look at the
// file it read, the settings it published under, and when a sign-in or a
// client it read expires (zero: none).
func (m *mcpClients) report(path string) (fileLook, haentities.Settings, time.Time) {
	settings := m.d.eng.currentRules().Settings
	look := lookAt(path) // before the read: a change after it is seen at the next poll
	if !settings.MCPClients {
		m.shown.publish(m.d, nil) // forgotten: turned on again, it publishes at once
		return look, settings, time.Time{}
	}
	now := m.d.clock.Now()
	clients, grants, limits, err := oauth.Clients(path, now)
	if err != nil {
		// The server refuses every OAuth token then; the sensor keeps
		// its last value, and the next change of the file is read.
		m.d.log.Warn().Err(err).Msg("MCP clients not read: Home Assistant's mcp_clients keeps its last value")
		return look, settings, time.Time{}
	}
	m.shown.publish(m.d, haentities.MCPClientsStates(settings, mcpClientsState(clients, grants, limits), now))
	var due time.Time
	earlier := func(t time.Time) {
		if due.IsZero() || t.Before(due) {
			due = t
		}
	}
	for _, g := range grants {
		earlier(g.Expires)
	}
	for _, c := range clients {
		earlier(oauth.ClientExpiry(c))
	}
	return look, settings, due
}

// mcpClientsState is the clients signed in, as the sensor shows them: a
// registration no sign-in followed is left out (anyone who reaches the
// cabinet may register).
func mcpClientsState(clients []oauth.Client, grants []oauth.Grant, limits oauth.Limits) haentities.MCPClientsState {
	st := haentities.MCPClientsState{Locked: limits.Locked}
	for _, s := range oauth.Summaries(clients, grants) {
		if !s.SignedIn() {
			continue
		}
		c := haentities.MCPClient{ID: s.ID, Name: s.Name, Kind: s.Kind, Scopes: s.Scopes}
		if s.LastRequest != nil {
			c.LastRequest = *s.LastRequest
		}
		if s.SignInExpires != nil {
			c.Expires = *s.SignInExpires
		}
		st.Clients = append(st.Clients, c)
	}
	return st
}
