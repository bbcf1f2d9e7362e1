// Package paths names every file Cabinet keeps in its two directories: the
// state dir on /userdata (cabinet.state_dir; it survives reboots) and the
// run dir on tmpfs (/var/run/cabinet; /userdata may be vfat or exFAT, which
// have no sockets). The hook, the daemon, doctor and the tests all find the
// store, the spool, the intake log, the socket and the rest here, so a
// file is named once.
package paths

import "path/filepath"

// File names in the run dir. Scripts rendered by package packaging use them
// too, so they are constants.
const (
	SocketName          = "cabinet.sock"
	PIDFileName         = "serve.pid"
	UpFileName          = "serve.up"
	InboxName           = "inbox"
	ScreensaverFlagName = "screensaver"
)

// Layout is where one cabinet's files are: both directories already
// resolved (under cabinet.paths.root in tests and the simulator).
type Layout struct {
	State string // the state dir, /userdata/system/cabinet by default
	Run   string // the run dir, /var/run/cabinet
}

// Store is the bbolt store: tracker state, outbox, session history, names.
func (l Layout) Store() string { return filepath.Join(l.State, "cabinet.db") }

// Spool is the folder where events wait while the store is busy.
func (l Layout) Spool() string { return filepath.Join(l.State, "spool") }

// Intake is the daemon's write-ahead log of acked events.
func (l Layout) Intake() string { return filepath.Join(l.State, "intake.log") }

// Log is the shared, size-bounded log file of `serve` and `hook`.
func (l Layout) Log() string { return filepath.Join(l.State, "cabinet.log") }

// ID holds the generated cabinet id, apart from the store so that a damaged
// store never mints a new Home Assistant device.
func (l Layout) ID() string { return filepath.Join(l.State, "id") }

// MAC keeps the MAC address the device block carries, chosen once (see
// ID: the same reason, Home Assistant's device must not change).
func (l Layout) MAC() string { return filepath.Join(l.State, "mac") }

// Token is the bearer token of MCP over HTTP (0600).
func (l Layout) Token() string { return filepath.Join(l.State, "token") }

// OAuth is the OAuth clients' and grants' file (hashes only; package oauth).
func (l Layout) OAuth() string { return filepath.Join(l.State, "oauth.json") }

// FlushLock is held by the one delayed-flush process of standalone hooks.
func (l Layout) FlushLock() string { return filepath.Join(l.State, "flush.lock") }

// InstallLock is held while a library install or uninstall runs (the daemon's, or `cabinet call`'s).
func (l Layout) InstallLock() string { return filepath.Join(l.State, "install.lock") }

// Socket is the daemon's unix socket.
func (l Layout) Socket() string { return filepath.Join(l.Run, SocketName) }

// PIDFile is the daemon's single-instance lock, holding its pid.
func (l Layout) PIDFile() string { return filepath.Join(l.Run, PIDFileName) }

// UpFile says the daemon takes the wrappers' inbox: its pid and start time
// (field 22 of /proc/PID/stat), which a wrapper compares with /proc using
// shell builtins only, so a dead daemon's reused pid does not fool it.
func (l Layout) UpFile() string { return filepath.Join(l.Run, UpFileName) }

// Inbox is the folder where wrappers leave their events while the daemon
// runs (see package inbox).
func (l Layout) Inbox() string { return filepath.Join(l.Run, InboxName) }

// ScreensaverFlag lets game-selected through to the binary while the
// screensaver runs or just ran (the wrappers' gate when no daemon runs).
func (l Layout) ScreensaverFlag() string { return filepath.Join(l.Run, ScreensaverFlagName) }
