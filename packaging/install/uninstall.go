package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
)

// UninstallOptions are one uninstall run.
type UninstallOptions struct {
	// Purge also removes the state dir and every cabinet.* line of
	// batocera.conf, after ClearBroker has cleared the cabinet's retained
	// messages.
	Purge       bool
	ClearBroker func(ctx context.Context) (string, error)
	// RemoveFirewall removes the rule --close-retroarch-port added (nil:
	// nothing to remove).
	RemoveFirewall func(ctx context.Context, port int) error
	DryRun         bool
	Out            interface{ Write([]byte) (int, error) }
}

// UninstallResult says what was removed and what was left.
type UninstallResult struct {
	Removed []string
	Left    []string // files that differ from what Cabinet wrote, with why
	Notes   []string
}

// Uninstall stops and disables the service and removes every file install
// wrote and nothing else: a file that differs from what Cabinet wrote is
// left and listed. Without Purge the state dir (store, token, id, secrets)
// and the cabinet.* keys stay, so a reinstall picks up where it left off.
func Uninstall(ctx context.Context, t Target, svc Service, o UninstallOptions) (UninstallResult, error) {
	var res UninstallResult
	m, err := readManifest(t.manifestPath())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return res, fmt.Errorf("%w; remove the files by hand (README: \"Install by hand\")", err)
	}
	if errors.Is(err, os.ErrNotExist) {
		// Installed by hand, or by a Cabinet before the manifest: what
		// packaging renders now, where it matches byte for byte.
		for _, s := range append(t.Layout.Files(), t.Layout.ServiceScript()) {
			m.addFile(s.Path, []byte(s.Content))
		}
		m.Service = t.Layout.ServiceName
	}
	if m.Service == "" {
		m.Service = t.Layout.ServiceName
	}

	conf, err := readConf(t.Conf)
	if err != nil {
		return res, err
	}
	newConf, _ := batoconf.DisableService(conf, m.Service)
	if o.Purge {
		newConf = batoconf.RemoveKeys(newConf, func(k string) bool { return strings.HasPrefix(k, "cabinet.") })
	}

	type removal struct{ path, why string }
	var remove []removal
	for _, f := range m.Files {
		if strings.HasPrefix(f.Path, t.StateDir+string(filepath.Separator)) {
			continue // the saved secrets: the state dir stays, or goes whole with --purge
		}
		b, err := os.ReadFile(f.Path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case err != nil:
			res.Left = append(res.Left, fmt.Sprintf("%s (cannot read it: %v)", f.Path, err))
		case sum(b) != f.SHA256:
			res.Left = append(res.Left, fmt.Sprintf("%s (changed since Cabinet wrote it: remove it yourself if you no longer need it)", f.Path))
		default:
			remove = append(remove, removal{path: f.Path})
		}
	}
	for _, p := range []string{t.Layout.Binary, t.prevBinary(), t.Layout.Binary + ".next", t.storeCopy()} {
		if _, err := os.Stat(p); err == nil {
			remove = append(remove, removal{path: p})
		}
	}

	if o.DryRun {
		fmt.Fprintf(o.Out, "would stop the service and disable it in %s\n", t.Conf)
		for _, r := range remove {
			fmt.Fprintf(o.Out, "would remove %s\n", r.path)
		}
		for _, l := range res.Left {
			fmt.Fprintf(o.Out, "would leave %s\n", l)
		}
		fmt.Fprint(o.Out, Diff(t.Conf, conf, newConf))
		if o.Purge {
			fmt.Fprintf(o.Out, "would clear Cabinet's retained messages from the broker and remove %s\n", t.StateDir)
		}
		return res, nil
	}

	if _, err := os.Stat(t.serviceFile()); err == nil {
		if err := svc.Stop(ctx); err != nil {
			return res, fmt.Errorf("stop the service: %w", err)
		}
		res.Removed = append(res.Removed, "stopped the service")
		// What the service kept on tmpfs (its pid, the daemon's stderr, the
		// emptied inbox) goes with it.
		if err := os.RemoveAll(t.Layout.RunDir); err == nil {
			res.Removed = append(res.Removed, "removed "+t.Layout.RunDir+"/")
		}
	}
	if !bytes.Equal(conf, newConf) {
		if err := batoconf.WriteFile(t.Conf, newConf); err != nil {
			return res, fmt.Errorf("save %s: %w", t.Conf, err)
		}
		what := "disabled the service in " + t.Conf
		if o.Purge {
			what = "removed the service and every cabinet.* setting from " + t.Conf
		}
		res.Removed = append(res.Removed, what)
	}
	if m.ClosePort && o.RemoveFirewall != nil {
		if err := o.RemoveFirewall(ctx, m.RetroArchPort); err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("the firewall rule for RetroArch's port %d could not be removed (%v); it goes at the next reboot", m.RetroArchPort, err))
		} else {
			res.Removed = append(res.Removed, fmt.Sprintf("removed the firewall rule keeping RetroArch's port %d to this machine", m.RetroArchPort))
		}
	}
	for _, r := range remove {
		if err := os.Remove(r.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			res.Left = append(res.Left, fmt.Sprintf("%s (cannot remove it: %v)", r.path, err))
			continue
		}
		res.Removed = append(res.Removed, "removed "+r.path)
	}
	// Folders install created, deepest first, when nothing else is in them.
	dirs := append([]string(nil), m.Dirs...)
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if d == t.StateDir && !o.Purge {
			continue
		}
		if err := os.Remove(d); err == nil {
			res.Removed = append(res.Removed, "removed "+d+"/")
		}
	}

	if o.Purge {
		if o.ClearBroker != nil {
			what, err := o.ClearBroker(ctx)
			if err != nil {
				res.Notes = append(res.Notes, fmt.Sprintf("the broker was not cleared (%v): the device stays in Home Assistant as unavailable; delete it there (Settings → Devices → MQTT)", err))
			} else if what != "" {
				res.Removed = append(res.Removed, "cleared "+what)
			}
		}
		if err := os.RemoveAll(t.StateDir); err != nil {
			return res, fmt.Errorf("remove %s: %w", t.StateDir, err)
		}
		res.Removed = append(res.Removed, "removed "+t.StateDir+"/ (store, history, token, id, secrets)")
	} else {
		res.Notes = append(res.Notes, fmt.Sprintf("kept %s (store, history, token, id) and the cabinet.* settings: a reinstall picks up where this one left off; `cabinet uninstall --purge` removes them too", t.StateDir))
	}
	os.Remove(t.manifestPath())
	return res, nil
}
