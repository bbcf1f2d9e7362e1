package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/pairing"
	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/daemon/library/rommreport"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/hook/socket"
	"github.com/batocera-cabinet/cabinet/hook/store"
)

type rommCommand struct{ env *env }

const rommDoc = `Pair the cabinet with the household's RomM (cabinet.romm.url), show the pairing, or forget it.

  pair               RomM 5.0 or newer: show a code (in this terminal and on the cabinet's
                     screen) to approve in RomM's web UI, then keep the token it gives
  pair --code CODE   RomM 4.8 or newer: trade the 8-character code RomM shows under
                     Profile → Client tokens → Pair for that token
  status             RomM's version, the device, the token's age and scopes (reads only)
  unpair             forget the paired token; the cabinet stops using it
  backfill --since D also report the sessions logged since D (2026-01-31), not only those after pairing
  sync               send what RomM lacks now, when cabinet serve does not run (it reports by itself)

A token in cabinet.romm.token (or _file) wins over a paired one; pair refuses while it is set.
The paired token is kept 0600 in <state_dir>/romm/token (on exFAT modes mean nothing).`

func (c *rommCommand) Run(ctx context.Context, args []string) error {
	sub := ""
	if len(args) > 0 {
		sub = args[0]
	}
	switch sub {
	case "pair":
		return c.pair(ctx, args[1:])
	case "status":
		return c.status(ctx, args[1:])
	case "unpair":
		return c.unpair(args[1:])
	case "backfill":
		return c.backfill(ctx, args[1:])
	case "sync":
		return c.sync(ctx, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintf(c.env.Stderr, "Usage: cabinet romm pair [--code XXXXXXXX] | status | unpair | backfill --since DATE | sync [--set key=value]\n\n%s\n", rommDoc)
		return errHelp
	}
	return fmt.Errorf("%w: want `cabinet romm pair`, `cabinet romm status` or `cabinet romm unpair` (see `cabinet romm -h`)", errUsage)
}

// rommStore is where `cabinet romm pair` keeps the token: <state_dir>/romm.
func rommStore(cfg *config.Config) pairing.Store {
	return pairing.Store{Dir: filepath.Join(cfg.StatePath(), "romm")}
}

// rommToken is the token the RomM tools use: cabinet.romm.token (or _file) when set (even when
// its file cannot be read: it still wins), else the one `cabinet romm pair` stored for
// cabinet.romm.url (never one paired with another address).
func rommToken(cfg *config.Config) string {
	if configuredRomMToken(cfg) || cfg.RomM.URL == "" {
		return cfg.RomM.Token.Reveal()
	}
	tok, _ := rommStore(cfg).TokenFor(cfg.RomM.URL)
	return tok
}

// rommDeviceID is RomM's id of the cabinet when it is paired with the RomM of cabinet.romm.url,
// "" when not.
func rommDeviceID(cfg *config.Config) string {
	if cfg.RomM.URL == "" {
		return ""
	}
	st := rommStore(cfg)
	if _, err := st.TokenFor(cfg.RomM.URL); err != nil {
		return ""
	}
	p, err := st.Load()
	if err != nil {
		return ""
	}
	return p.DeviceID
}

// configuredRomMToken reports whether a token is configured (even one whose file failed to read).
func configuredRomMToken(cfg *config.Config) bool {
	return cfg.RomM.Token != "" || cfg.RomM.TokenFile != ""
}

// rommClient is a RomM client for the commands here: the tools' address and CA, token given.
func rommClient(cfg *config.Config, token string) (*romm.Client, error) {
	return romm.New(romm.Config{URL: cfg.RomM.URL, Token: token, CAFile: resolvedFile(cfg, cfg.RomM.CAFile), Timeout: 10 * time.Second})
}

func (c *rommCommand) pair(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "romm pair", "[--code XXXXXXXX]", `Pair the cabinet with RomM. On RomM 5.0 and later it shows a code, here and on the cabinet's
screen, to approve at <RomM>/pair/device, and waits (up to the code's 10 minutes) until it is
approved, denied or expired. With --code it trades a pair code from RomM 4.8 or later (Profile →
Client tokens → Pair; valid 60 s) instead. The cabinet registers itself as a RomM device.`, &sets)
	code := fs.String("code", "", "pair with this 8-character code from RomM (Profile → Client tokens → Pair)")
	syncSaves := fs.Bool("sync-saves", false, "also ask for RomM's assets.read and assets.write, which syncing the games' saves needs (cabinet.romm.sync_saves)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected %q", errUsage, fs.Arg(0))
	}
	l := loadConfig(c.env, sets)
	cfg := &l.Config
	if configuredRomMToken(cfg) {
		return pairing.ErrConfiguredToken
	}
	if l.Err != nil {
		return fmt.Errorf("fix the configuration first (see `cabinet config`):\n%v", l.Err)
	}
	if cfg.RomM.URL == "" {
		return errors.New("set cabinet.romm.url to RomM's address first, such as http://romm.lan:8080")
	}
	opts, err := pairOptions(cfg)
	if err != nil {
		return err
	}
	opts.Out = c.env.Stdout
	if *syncSaves {
		opts.Scopes = pairing.SyncScopes()
	}
	if old, err := opts.Store.Load(); err == nil {
		fmt.Fprintf(c.env.Stdout, "The cabinet is already paired with %s (since %s); a new pairing replaces it.\n",
			old.URL, old.PairedAt.Local().Format("2006-01-02 15:04"))
	}
	var p pairing.Paired
	if *code != "" {
		p, err = pairing.PairCode(ctx, opts, *code)
	} else {
		p, err = pairing.Pair(ctx, opts)
	}
	if err != nil {
		return err
	}
	w := c.env.Stdout
	fmt.Fprintf(w, "Paired with RomM at %s", cfg.RomM.URL)
	if p.DeviceID != "" {
		fmt.Fprintf(w, " as device %s", p.DeviceID)
	}
	fmt.Fprintf(w, ".\nScopes: %s\n", scopeList(p.Scopes))
	asked := opts.Scopes
	if asked == nil {
		asked = pairing.Scopes()
	}
	if missing := missingScopes(asked, p.Scopes); len(missing) > 0 && p.Scopes != nil {
		fmt.Fprintf(w, "RomM granted fewer scopes than asked for: without %s the features that need them stay off.\n", strings.Join(missing, ", "))
	}
	fmt.Fprintf(w, "The token is kept in %s (mode 0600).\n", opts.Store.TokenPath())
	if cfg.RomM.SyncSaves && !pairing.CanSyncSaves(p.Scopes) {
		fmt.Fprintln(w, "cabinet.romm.sync_saves is on, but this pairing cannot sync saves: run `cabinet romm pair --sync-saves`.")
	}
	return nil
}

// pairOptions builds the pairing's dependencies: a token-less RomM client, the cabinet's screen
// (ES toasts, RetroArch's on-screen message during a game) and how the cabinet describes itself.
func pairOptions(cfg *config.Config) (pairing.Options, error) {
	id, err := cfg.EnsureCabinetID()
	if err != nil {
		return pairing.Options{}, err
	}
	client, err := rommClient(cfg, "")
	if err != nil {
		return pairing.Options{}, err
	}
	esc, err := es.New(es.Config{URL: cfg.ESURL, Timeout: 2 * time.Second})
	if err != nil {
		return pairing.Options{}, err
	}
	return pairing.Options{
		Server:          pairing.ClientServer{Client: client},
		URL:             cfg.RomM.URL,
		Store:           rommStore(cfg),
		Screen:          pairing.CabinetScreen{ES: esc, RetroArch: retroarch.New(cfg.RetroArchAddr, retroarch.WithTimeout(time.Second))},
		ConfiguredToken: configuredRomMToken(cfg),
		Identifier:      id,
		Device:          cabinetDevice(cfg),
	}, nil
}

// cabinetDevice is how the cabinet describes itself to RomM as a device:
// RomM finds an earlier registration by the MAC address, or the hostname
// and platform.
func cabinetDevice(cfg *config.Config) romm.DeviceInfo {
	host, _ := os.Hostname()
	return romm.DeviceInfo{Name: cfg.Name, Platform: pairing.Platform, Client: pairing.Client,
		ClientVersion: buildVersion(), Hostname: host, MAC: primaryMAC()}
}

// primaryMAC is the hardware address of the first interface that is up and not loopback, "" when
// there is none.
func primaryMAC() string {
	ifs, err := net.Interfaces()
	if err != nil {
		return ""
	}
	sort.Slice(ifs, func(i, j int) bool { return ifs[i].Index < ifs[j].Index })
	for _, i := range ifs {
		if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagLoopback == 0 && len(i.HardwareAddr) == 6 {
			return i.HardwareAddr.String()
		}
	}
	return ""
}

func scopeList(s []string) string {
	if len(s) == 0 {
		return "(none reported)"
	}
	return strings.Join(s, " ")
}

// missingScopes are the requested scopes RomM did not grant.
func missingScopes(asked, granted []string) []string {
	var out []string
	for _, s := range asked {
		if !slices.Contains(granted, s) {
			out = append(out, s)
		}
	}
	return out
}

func (c *rommCommand) status(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "romm status", "", `Show RomM's version, the cabinet's RomM device, the token's age and what it can read
(probed with reads only). The token itself is never shown. Exits 1 when the cabinet
has no working RomM token.`, &sets)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	l := loadConfig(c.env, sets)
	cfg := &l.Config
	if cfg.RomM.URL == "" {
		return errors.New("cabinet.romm.url is not set: set it to RomM's address, such as http://romm.lan:8080, then run `cabinet romm pair`")
	}
	return rommStatus(ctx, c.env.Stdout, cfg, time.Now())
}

// rommStatus prints the status lines and returns an error when there is no working token.
func rommStatus(ctx context.Context, w io.Writer, cfg *config.Config, now time.Time) error {
	var lines [][2]string
	line := func(k, format string, a ...any) { lines = append(lines, [2]string{k, fmt.Sprintf(format, a...)}) }
	var token string
	paired, perr := rommStore(cfg).Load()
	switch {
	case configuredRomMToken(cfg):
		token = cfg.RomM.Token.Reveal()
		line("token", "cabinet.romm.token (configured; it wins over a paired one)")
	case errors.Is(perr, pairing.ErrNotPaired):
		line("token", "none: run `cabinet romm pair`")
	case perr != nil:
		line("token", "%v", perr)
	case !strings.EqualFold(strings.TrimRight(paired.URL, "/"), strings.TrimRight(cfg.RomM.URL, "/")):
		line("token", "paired with %s, not cabinet.romm.url: run `cabinet romm pair` again", paired.URL)
	default:
		token = paired.Token
		exp := ""
		if !paired.ExpiresAt.IsZero() {
			exp = ", expires " + paired.ExpiresAt.Local().Format("2006-01-02 15:04")
		}
		line("token", "paired %s ago (%s)%s", age(now.Sub(paired.PairedAt)), paired.PairedAt.Local().Format("2006-01-02 15:04"), exp)
		if paired.DeviceID != "" {
			line("device", "%s", paired.DeviceID)
		} else {
			line("device", "none: RomM did not register the cabinet; run `cabinet romm pair` again")
		}
		line("granted", "%s", scopeList(paired.Scopes))
	}
	flush := func() {
		for _, l := range lines {
			fmt.Fprintf(w, "%-8s %s\n", l[0], l[1])
		}
		lines = nil
	}
	client, err := rommClient(cfg, token)
	if err != nil {
		return err
	}
	// The heartbeat is open: the version shows even without a token.
	v, err := client.Version(ctx)
	if err != nil {
		fmt.Fprintf(w, "%-8s %s: %v\n", "romm", cfg.RomM.URL, err)
		flush()
		return &codedError{code: exitError}
	}
	fmt.Fprintf(w, "%-8s %s at %s\n", "romm", v, cfg.RomM.URL)
	flush()
	if token == "" {
		return &codedError{code: exitError}
	}
	probe := client.ProbeScopes(ctx)
	names := make([]string, 0, len(probe))
	for s := range probe {
		names = append(names, s)
	}
	sort.Strings(names)
	var works, fails []string
	for _, s := range names {
		switch err := probe[s]; {
		case err == nil:
			works = append(works, s)
		case errors.Is(err, romm.ErrMissingScope):
			fails = append(fails, s+" (not granted)")
		case errors.Is(err, romm.ErrUnauthorized):
			fails = append(fails, s+" (token refused)")
		default:
			fails = append(fails, fmt.Sprintf("%s (%v)", s, err))
		}
	}
	if len(works) > 0 {
		line("reads", "%s work", strings.Join(works, ", "))
	}
	if len(fails) > 0 {
		line("fails", "%s", strings.Join(fails, "; "))
	}
	flush()
	if len(fails) > 0 {
		return &codedError{code: exitError}
	}
	return nil
}

// age is a duration as a person says it.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return plural(int(d/time.Hour), "hour")
	}
	return plural(int(d/(24*time.Hour)), "day")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

func (c *rommCommand) unpair(args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "romm unpair", "", `Forget the token `+"`cabinet romm pair`"+` stored: the cabinet stops using it and stops
reporting to RomM. The token stays valid in RomM until it is deleted there (Profile →
Client tokens).`, &sets)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	l := loadConfig(c.env, sets)
	cfg := &l.Config
	st := rommStore(cfg)
	p, err := st.Load()
	if errors.Is(err, pairing.ErrNotPaired) {
		fmt.Fprintln(c.env.Stdout, "The cabinet is not paired with RomM: nothing to forget.")
		return nil
	}
	if err := st.Forget(); err != nil {
		return err
	}
	w := c.env.Stdout
	if p.DeviceID != "" {
		fmt.Fprintf(w, "Forgot the RomM token of device %s paired with %s.\n", p.DeviceID, p.URL)
	} else {
		fmt.Fprintln(w, "Forgot the paired RomM token.")
	}
	fmt.Fprintln(w, "To revoke it in RomM as well, delete it under Profile → Client tokens.")
	if cfg.RomM.Token != "" {
		fmt.Fprintln(w, "cabinet.romm.token is still set and stays in use.")
	}
	return nil
}

func (c *rommCommand) backfill(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "romm backfill", "--since DATE", "Also report to RomM the sessions logged since DATE (YYYY-MM-DD, the cabinet's local time), not only those after pairing. The daemon sends them within a minute; without it, run `cabinet romm sync`.", &sets)
	since := fs.String("since", "", "first day to report (YYYY-MM-DD)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	day, err := time.ParseInLocation("2006-01-02", *since, time.Local)
	if err != nil {
		return fmt.Errorf("%w: --since wants a date such as 2026-01-31", errUsage)
	}
	l := loadConfig(c.env, sets)
	st := rommStore(&l.Config)
	p, err := st.Load()
	if err != nil {
		return fmt.Errorf("%w: pair the cabinet first (`cabinet romm pair`)", err)
	}
	p.ReportSince = day
	if err := st.Save(p); err != nil {
		return err
	}
	fmt.Fprintf(c.env.Stdout, "Sessions logged since %s go to RomM too (RomM keeps each once).\n", day.Format("2006-01-02"))
	return nil
}

// sync drains the sessions RomM lacks once, in this process: for a cabinet
// whose daemon does not run (the daemon reports by itself).
func (c *rommCommand) sync(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "romm sync", "", "Send RomM the play sessions it lacks, now. cabinet serve does it by itself; this is for a cabinet where it does not run.", &sets)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	l := loadConfig(c.env, sets)
	cfg := &l.Config
	var st daemon.Status
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	err := socket.Status(sctx, cfg.Layout().Socket(), &st)
	cancel()
	if err == nil {
		fmt.Fprintln(c.env.Stdout, "cabinet serve runs and reports to RomM by itself (within a minute of each session).")
		return nil
	}
	r := rommReport(cfg)
	if r.Token == "" {
		return errors.New("nothing to send: the cabinet is not paired with the RomM of cabinet.romm.url, or cabinet.romm.report_play is off")
	}
	client, err := rommClient(cfg, r.Token)
	if err != nil {
		return err
	}
	db, err := store.Open(cfg.Layout().Store(), store.Options{})
	if err != nil {
		return fmt.Errorf("open the store: %w", err)
	}
	defer db.Close()
	root := cfg.Root
	rep := &rommreport.Reporter{Store: rommreport.Marks{DB: db}, Post: rommreport.RomMPoster{Client: client, DeviceID: r.DeviceID},
		Resolve: &rommreport.FileResolver{Lookup: rommreport.RomMLookup{Client: client, Platforms: platforms.Default().WithOverrides(cfg.RomM.PlatformMap)},
			Path: func(p string) string { return filepath.Join(root, p) }},
		Since: r.Since}
	pass, err := rep.Drain(ctx)
	fmt.Fprintf(c.env.Stdout, "RomM: %d session(s) delivered, %d unmatched (RomM does not have the game), %d to retry.\n", pass.Delivered, pass.Unmatched, pass.Retrying)
	return err
}
