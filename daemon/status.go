package daemon

import (
	"context"
	"os"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/daemon/library/rommreport"
	"github.com/batocera-cabinet/cabinet/daemon/library/savesync"
	"github.com/batocera-cabinet/cabinet/hook/store"
)

// Status is what `cabinet doctor` and the health tool see of the daemon.
type Status struct {
	PID           int       `json:"pid"`
	Version       string    `json:"version"`
	Started       time.Time `json:"started"`
	ConfigError   string    `json:"config_error,omitempty"`
	MQTTEnabled   bool      `json:"mqtt_enabled"`
	MQTTConnected bool      `json:"mqtt_connected"`
	MQTTError     string    `json:"mqtt_error,omitempty"`
	Reconnects    int64     `json:"mqtt_reconnects"`
	OutboxDepth   int       `json:"outbox_depth"`
	OutboxDropped uint64    `json:"outbox_dropped"`
	OutboxExpired uint64    `json:"outbox_expired"`
	Sessions      int       `json:"sessions"`
	// MCPHTTP is where MCP over HTTP listens; MCPHTTPError why it does not.
	MCPHTTP      string `json:"mcp_http,omitempty"`
	MCPHTTPError string `json:"mcp_http_error,omitempty"`
	// RomM is where the play sessions reported to RomM stand, nil when the
	// cabinet does not report to RomM.
	RomM *RomMStatus `json:"romm,omitempty"`
	// PendingRequests counts the library requests the daemon still follows.
	PendingRequests int `json:"pending_requests,omitempty"`
	// Household is the play-time rules and today's budget.
	Household *household.Report `json:"household,omitempty"`
	// SaveSync is the save sync with RomM.
	SaveSync *savesync.Status `json:"save_sync,omitempty"`
}

// RomMStatus counts the sessions logged since reporting began, by their
// delivery to RomM.
type RomMStatus struct {
	Delivered int `json:"delivered"`
	Unmatched int `json:"unmatched"` // RomM does not have the game: not retried
	Waiting   int `json:"waiting"`   // not sent yet, or failed and retried later
	// Device says what became of the cabinet's RomM device when RomM
	// answered that it did not know it: registered again, or why not.
	Device string `json:"device,omitempty"`
	// DeviceProblem: the device could not be registered again; RomM's
	// "now playing" stays off until the cabinet is paired again.
	DeviceProblem bool `json:"device_problem,omitempty"`
	// LastError is RomM's last failure, "" once a pass succeeds.
	LastError string `json:"last_error,omitempty"`
}

// Status reports the daemon's health.
func (d *Daemon) Status() Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := Status{PID: os.Getpid(), Version: d.opts.Version, Started: d.started, MQTTEnabled: d.cfg.mqttEnabled(),
		MCPHTTP: d.http.addr, MCPHTTPError: d.http.err}
	if d.cfgErr != nil {
		st.ConfigError = d.cfgErr.Error()
	}
	if d.link != nil {
		st.MQTTConnected = d.link.Connected()
		st.Reconnects = d.link.Reconnects()
		if err := d.link.LastError(); err != nil && !st.MQTTConnected {
			st.MQTTError = err.Error()
		}
	}
	if s, err := d.eng.store().Stats(); err == nil {
		st.OutboxDepth, st.OutboxDropped, st.OutboxExpired, st.Sessions = s.QueueDepth+s.Undelivered, s.Dropped, s.Expired, s.Sessions
	}
	st.PendingRequests = d.PendingRequests()
	if r := d.cfg.RomM; r.Enabled() {
		if c, err := (rommreport.Marks{DB: d.eng.store()}).Stats(r.Since); err == nil {
			st.RomM = &RomMStatus{Delivered: c.Delivered, Unmatched: c.Unmatched, Waiting: c.Pending + c.Retrying,
				Device: d.romm.Text, DeviceProblem: d.romm.Problem, LastError: d.romm.LastErr}
		}
	}
	return st
}

// FullStatus is Status with the play-time rules' report, for `cabinet
// doctor` (over the socket). Status itself leaves it out: it is read
// inside the store's transactions (the diagnostics), and the rules' loop
// holds its lock while it writes to the store.
func (d *Daemon) FullStatus() Status {
	st := d.Status()
	if r, err := (householdControls{d}).Report(context.Background()); err == nil {
		st.Household = &r
	}
	if d.saves != nil {
		ss := d.saves.Status()
		st.SaveSync = &ss
	}
	return st
}

// config is the configuration in force.
func (d *Daemon) config() *Config {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg
}

// Store is the daemon's store (play history for the MCP tools).
func (d *Daemon) Store() *store.Store { return d.eng.store() }

// liveES is the watcher's and the UI mode's view of ES: whichever client
// the configuration in force names, so a new cabinet.es.url applies without
// a restart.
type liveES struct{ d *Daemon }

func (l liveES) RunningGame(ctx context.Context) (*es.Game, error) { return l.d.es().RunningGame(ctx) }
func (l liveES) Caps(ctx context.Context) (es.Caps, error)         { return l.d.es().Caps(ctx) }
