package requests

import (
	"context"
	"errors"
	"fmt"

	"github.com/batocera-cabinet/cabinet/daemon/library/install"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// install installs a request RomM lists, and says so on the screen.
func (f *Follower) install(ctx context.Context, v *view, r *Request) outcome {
	if f.Installer == nil {
		r.Detail = clean(r.Detail + " Not installed: cabinet.library.allow_install is off (install it with library_install).")
		return outcome{close: true}
	}
	if f.Playing != nil && f.Playing() {
		r.Detail = clean(fmt.Sprintf("In RomM (rom_id %d); it is installed once the game being played ends.", r.ROMID))
		return outcome{soon: true}
	}
	ictx, cancel := context.WithTimeout(ctx, InstallTimeout)
	res, err := f.Installer.Install(ictx, install.Request{ROMID: r.ROMID, System: r.System}, nil)
	cancel()
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return outcome{}
	case errors.Is(err, install.ErrBusy):
		r.Detail = clean(fmt.Sprintf("In RomM (rom_id %d); waiting for another install to finish.", r.ROMID))
		return outcome{soon: true}
	default:
		v.pass.InstallErr = err
		r.InstallTries++
		if r.InstallTries >= MaxInstallTries {
			r.State = StateFailed
			r.Detail = clean(fmt.Sprintf("In RomM (rom_id %d), but installing it failed %d times: %s", r.ROMID, r.InstallTries, err))
			return outcome{close: true}
		}
		r.Detail = clean(fmt.Sprintf("In RomM (rom_id %d); installing it failed (%s), Cabinet tries again.", r.ROMID, err))
		return outcome{}
	}
	r.State = StateInstalled
	game := untrusted.Clean(r.Game, 80)
	where := fmt.Sprintf("%s in %s", res.Path, res.System)
	switch {
	case res.Outcome == "unchanged":
		r.Detail = clean("It was on the cabinet already: " + where + ".")
	case res.Listed:
		r.Detail = clean("Installed: " + where + ".")
	default:
		r.Detail = clean("Installed: " + where + "; EmulationStation lists it once the running game ends.")
	}
	text := game + " is ready to play"
	if !res.Listed && res.Outcome != "unchanged" {
		text = game + " is installed: it appears in the list after this game"
	}
	f.show(ctx, text)
	return outcome{close: true}
}

// show is a courtesy: a screen that does not answer changes nothing.
func (f *Follower) show(ctx context.Context, text string) {
	if f.Screen == nil {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, showTimeout)
	defer cancel()
	_ = f.Screen.Show(sctx, text)
}
