//go:build !release

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/daemon/library/pairing"
	"github.com/batocera-cabinet/cabinet/daemon/library/savesync"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
)

// demoPairRomM pairs the demo's cabinet with the fake RomM as a household
// does: `cabinet romm pair` shows a code in the terminal and on the TV, and
// a moment later someone approves it in RomM's web UI (the fake's Approve).
// The daemon, watching <state>/romm, starts reporting at once.
func demoPairRomM(ctx context.Context, cfg *config.Config, cab *simulator.Cabinet, out io.Writer, scale float64) error {
	opts, err := pairOptions(cfg)
	if err != nil {
		return err
	}
	cab.RomM.SetDeviceAuthTiming(time.Second, 0) // RomM's 5 s poll would make the demo wait
	// The evening syncs saves (cabinet.romm.sync_saves): the pairing asks for RomM's assets.
	opts.Scopes = pairing.SyncScopes()
	opts.Out = &prefixWriter{w: out, prefix: "           "}
	opts.RepeatEvery = 2 * time.Second
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	go func() {
		for pctx.Err() == nil {
			if codes := cab.RomM.PendingDeviceCodes(); len(codes) > 0 {
				select {
				case <-pctx.Done():
					return
				case <-time.After(time.Duration(3 / scale * float64(time.Second))):
				}
				fmt.Fprintf(out, "%s ▶ in RomM's web UI, someone approves code %s\n", time.Now().Format("15:04:05"), codes[0])
				cab.RomM.Approve(codes[0], nil)
				return
			}
			select {
			case <-pctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	p, err := pairing.Pair(pctx, opts)
	if err != nil {
		return fmt.Errorf("pair with the simulated RomM: %w", err)
	}
	toasts := 0
	for _, c := range cab.ES.Calls() {
		if c.Route == fakees.RouteNotify {
			toasts++
		}
	}
	fmt.Fprintf(out, "%s ▶ paired: RomM knows the cabinet as device %s (the code showed on the TV %d time(s))\n",
		time.Now().Format("15:04:05"), p.DeviceID, toasts)
	return nil
}

// demoInstall is the evening's install: a game only RomM has (Cosmic Crusade, SNES) put on the
// cabinet and started with `cabinet call library_install … launch=true`, as an assistant would,
// through the running daemon; played a while, then quit.
func demoInstall(exe string, environ []string, out io.Writer, scale float64) []simulator.Step {
	d := func(s float64) time.Duration { return time.Duration(s / scale * float64(time.Second)) }
	call := fmt.Sprintf("cabinet call library_install rom_id=%d launch=true", fakeromm.ROMCosmicCrusade)
	return []simulator.Step{
		{Say: "installing a game only RomM has and starting it (" + call + ")", Do: func(ctx context.Context, cab *simulator.Cabinet) error {
			cmd := exec.CommandContext(ctx, exe, "call", "library_install", fmt.Sprintf("rom_id=%d", fakeromm.ROMCosmicCrusade), "launch=true")
			cmd.Env = environ
			b, err := cmd.CombinedOutput()
			var res struct{ Detail string }
			if err != nil || json.Unmarshal(b, &res) != nil || res.Detail == "" {
				return fmt.Errorf("%s: %v\n%s", call, err, b)
			}
			fmt.Fprintf(out, "           %s\n", res.Detail)
			return cab.WaitRunning(ctx)
		}, Wait: d(8)},
		{Say: "quitting it", Do: simulator.EndGame, Wait: d(3)},
	}
}

// showRomM prints what the household's RomM shows of the cabinet as it
// changes: the game it is playing now (RomM's activity), each session
// added to RomM's play history and each save RomM receives, from the
// cabinet or another device; shown is the last save's id printed.
func showRomM(ctx context.Context, r *fakeromm.Server, out io.Writer, shown *atomic.Int64) {
	playing, sessions := "", 0
	for {
		now := ""
		if a := r.Active(); len(a) > 0 {
			now = romName(r, a[0].ROMID)
		}
		if now != playing {
			what := now
			if what == "" {
				what = "(nothing)"
			}
			fmt.Fprintf(out, "%s   RomM now playing         %s\n", time.Now().Format("15:04:05"), what)
			playing = now
		}
		ps := r.PlaySessions()
		for _, s := range ps[min(sessions, len(ps)):] {
			fmt.Fprintf(out, "%s   RomM play history +      %s, %s from %s\n", time.Now().Format("15:04:05"),
				romName(r, s.ROMID), (time.Duration(s.DurationMS) * time.Millisecond).Round(time.Second), s.StartTime.Local().Format("15:04:05"))
		}
		sessions = len(ps)
		for _, sv := range r.Saves(0) { // by id
			if int64(sv.ID) <= shown.Load() {
				continue
			}
			fmt.Fprintf(out, "%s   RomM save +              %s from %s (%d bytes)\n", time.Now().Format("15:04:05"),
				sv.FileName, deviceName(r, sv.OriginDevice), sv.Size)
			shown.Store(int64(sv.ID))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// rommSettled waits (at most 5 s) until the daemon has reported every
// logged session to RomM, or found RomM lacks its game: the evening's last
// session is logged a few seconds after it ends.
func rommSettled(ctx context.Context, d *daemon.Daemon) *daemon.RomMStatus {
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := d.Status().RomM
		if st == nil || st.Waiting == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rommSummary is what RomM holds of the cabinet at the end: its play
// history, the saves, the daemon's count of what RomM lacked and the save
// conflicts waiting for a choice.
func rommSummary(r *fakeromm.Server, st *daemon.RomMStatus, ss *savesync.Status) []string {
	var lines []string
	for _, s := range r.PlaySessions() {
		lines = append(lines, fmt.Sprintf("play session  %s, %s (device %s)", romName(r, s.ROMID),
			(time.Duration(s.DurationMS)*time.Millisecond).Round(time.Second), s.DeviceID))
	}
	if len(lines) == 0 {
		lines = append(lines, "no play session")
	}
	for _, sv := range r.Saves(0) {
		lines = append(lines, fmt.Sprintf("save          %s, %s, %d bytes, from %s", romName(r, sv.ROMID), sv.FileName, sv.Size,
			deviceName(r, sv.OriginDevice)))
	}
	if st != nil {
		lines = append(lines, fmt.Sprintf("the cabinet: %d session(s) delivered, %d unmatched (games RomM does not have), %d waiting",
			st.Delivered, st.Unmatched, st.Waiting))
	}
	if ss != nil && ss.On {
		lines = append(lines, fmt.Sprintf("the cabinet's saves: %d uploaded and %d downloaded today, %d conflict(s) waiting for a choice",
			ss.UploadsToday, ss.DownloadsToday, ss.Conflicts))
	}
	return lines
}

func romName(r *fakeromm.Server, id int) string {
	if rom, ok := r.ROM(id); ok {
		return rom.Name
	}
	return fmt.Sprintf("ROM %d", id)
}

// prefixWriter indents every line written through it (what pairing tells
// the user, under the demo's own lines).
type prefixWriter struct {
	w      io.Writer
	prefix string
	mid    bool // inside a line
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	var sb strings.Builder
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		if !p.mid {
			sb.WriteString(p.prefix)
		}
		sb.WriteString(line)
		p.mid = !strings.HasSuffix(line, "\n")
	}
	if _, err := io.WriteString(p.w, sb.String()); err != nil {
		return 0, err
	}
	return len(b), nil
}
