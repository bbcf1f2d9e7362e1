// Package install puts Cabinet on a cabinet and takes it off again: the
// binary (the previous one kept for a rollback), every script packaging
// renders, the Batocera service and its entry in system.services, settings
// saved into batocera.conf, secrets in files, the MCP token — and the
// upgrade that stops the daemon, swaps the binary, checks that the new one
// answers and otherwise puts the old one back, store included.
//
// It edits batocera.conf itself, exactly as batocera-settings-set and
// batocera-services enable|disable do (packaging/batoconf, tested against
// the real tools), so it also works under cabinet.paths.root on a tree where
// Batocera's tools are absent. It never relies on symlinks or mode bits
// sticking: /userdata may be exFAT or vfat.
package install

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/packaging"
	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
)

// Target says where everything goes; every path is the real one on this
// machine (under cabinet.paths.root when it is set).
type Target struct {
	Layout   packaging.Layout // scripts, service and binary (Binary is where the binary goes)
	Conf     string           // batocera.conf
	StateDir string           // the state dir (store, token, secrets, manifest)
	// SecretsDir is where saved secrets go, as the path the `…_file` key
	// holds (unrooted: the config resolves it under cabinet.paths.root),
	// and SecretsPath maps it to this machine.
	SecretsDir  string
	SecretsPath func(string) string
}

func (t Target) manifestPath() string { return filepath.Join(t.StateDir, "installed.json") }
func (t Target) storePath() string    { return filepath.Join(t.StateDir, "cabinet.db") }
func (t Target) prevBinary() string   { return t.Layout.Binary + ".prev" }
func (t Target) storeCopy() string    { return t.storePath() + ".pre-upgrade" }
func (t Target) serviceFile() string  { return t.Layout.ServiceScript().Path }

// Secret is a secret setting to save: its value goes into a file in the
// state dir and FileKey (its `…_file` twin) into batocera.conf.
type Secret struct {
	Key, FileKey, Value string
}

// Service starts and stops the installed Batocera service and tells
// whether the daemon answers.
type Service interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	// Answering reports nil once the daemon answers on its socket, or
	// the last reason it did not when ctx ends.
	Answering(ctx context.Context) error
	// Running says whether a daemon answers right now.
	Running(ctx context.Context) bool
	// Log is the end of the service's error output, for a failure message.
	Log() string
}

// Options are one install run.
type Options struct {
	Source      string // the binary to install (the running one)
	Version     string // its version and commit, for messages and the manifest
	Commit      string
	StoreSchema uint64 // the store schema the source binary reads and writes
	Saves       []batoconf.KV
	Secrets     []Secret
	// ClosePort is install --close-retroarch-port: nil keeps what the last
	// install chose. RetroArchPort is the port to close
	// (global.retroarch.network_cmd_port).
	ClosePort     *bool
	RetroArchPort int
	// RemoveFirewall removes the rule when a reinstall opens the port
	// again.
	RemoveFirewall func(ctx context.Context, port int) error
	DryRun         bool
	// NewToken creates the MCP token when there is none (nil: no token).
	NewToken func() error
	// HasToken says whether the token exists.
	HasToken func() bool
	// ReadSchema reads the store's schema version (0: no store).
	ReadSchema func(path string) (uint64, error)
	// StartTimeout bounds the wait for the (new) daemon to answer.
	StartTimeout time.Duration
	Out          io.Writer
}

// Result says what a run did.
type Result struct {
	Changed  []string // one line per change
	Upgraded bool
	From, To string // versions of an upgrade
	// PortClosed says the service keeps RetroArch's command port to this
	// machine (this install's --close-retroarch-port or an earlier one's).
	PortClosed bool
}

// ErrRolledBack says an upgrade failed and the previous binary runs again.
var ErrRolledBack = errors.New("upgrade rolled back")

// change is one file to write.
type change struct {
	path    string
	mode    os.FileMode
	content []byte // nil for the binary (copied from source)
	old     []byte
	exists  bool
	binary  bool
	secret  bool
}

// Install installs or upgrades Cabinet at t.
func Install(ctx context.Context, t Target, svc Service, o Options) (Result, error) {
	var res Result
	prev, _ := readManifest(t.manifestPath())
	closePort := prev.ClosePort
	if o.ClosePort != nil {
		closePort = *o.ClosePort
	}
	port := o.RetroArchPort
	l := t.Layout
	l.CloseRetroArchPort, l.RetroArchPort = closePort, port
	res.PortClosed = closePort

	srcSum, err := fileSum(o.Source)
	if err != nil {
		return res, fmt.Errorf("read the binary to install: %w", err)
	}
	oldSum, _ := fileSum(t.Layout.Binary)
	upgrade := oldSum != "" && oldSum != srcSum
	res.Upgraded = upgrade
	res.From, res.To = prev.Version, o.Version
	if res.From == "" {
		res.From = "the installed binary"
	}

	// Every file, with what is there now.
	var files []change
	if oldSum != srcSum {
		files = append(files, change{path: t.Layout.Binary, mode: 0o755, binary: true, exists: oldSum != ""})
	}
	scripts := append(l.Files(), l.ServiceScript())
	for _, s := range scripts {
		files = append(files, change{path: s.Path, mode: os.FileMode(s.Mode), content: []byte(s.Content)})
	}
	for _, s := range o.Secrets {
		name := secretFileName(s.Key)
		files = append(files, change{path: t.SecretsPath(filepath.Join(t.SecretsDir, name)), mode: 0o600, content: []byte(s.Value + "\n"), secret: true})
	}
	var pending []change
	for _, c := range files {
		if c.binary {
			pending = append(pending, c)
			continue
		}
		old, err := os.ReadFile(c.path)
		switch {
		case err == nil:
			c.old, c.exists = old, true
		case !errors.Is(err, os.ErrNotExist):
			return res, fmt.Errorf("read %s: %w", c.path, err)
		}
		if !c.exists || !bytes.Equal(c.old, c.content) {
			pending = append(pending, c)
		}
	}

	// batocera.conf: the saved settings, the secrets' file keys and the
	// service's entry in system.services.
	conf, err := readConf(t.Conf)
	if err != nil {
		return res, err
	}
	kvs := append([]batoconf.KV(nil), o.Saves...)
	for _, s := range o.Secrets {
		kvs = append(kvs, batoconf.KV{Key: s.FileKey, Value: filepath.Join(t.SecretsDir, secretFileName(s.Key))})
	}
	newConf := conf
	if len(kvs) > 0 {
		if newConf, err = batoconf.Set(conf, kvs...); err != nil {
			return res, fmt.Errorf("save settings: %w", err)
		}
	}
	newConf, _ = batoconf.EnableService(newConf, l.ServiceName)
	confChanged := !bytes.Equal(conf, newConf)
	needToken := o.HasToken != nil && !o.HasToken()

	if o.DryRun {
		return res, dryRun(o, t, pending, conf, newConf, needToken, upgrade, closePort != prev.ClosePort, srcSum)
	}

	running := svc.Running(ctx)
	serviceChanged := false
	for _, c := range pending {
		if c.path == t.serviceFile() {
			serviceChanged = true
		}
	}
	// The service is restarted for a new binary or a new service script;
	// settings and hook scripts apply without it.
	restart := running && (upgrade || serviceChanged)
	if restart {
		fmt.Fprintf(o.Out, "Stopping the service (the daemon publishes offline and closes its store)…\n")
		if err := svc.Stop(ctx); err != nil {
			return res, fmt.Errorf("stop the service: %w", err)
		}
	}
	restartOld := func(why error) error {
		if restart {
			if err := svc.Start(ctx); err != nil {
				return fmt.Errorf("%w; and restarting the service failed too: %v", why, err)
			}
		}
		return why
	}

	// A store written by a newer Cabinet is never handed to this one.
	schema := uint64(0)
	if o.ReadSchema != nil && (restart || !running) { // a running daemon holds the store; its binary stays
		if schema, err = o.ReadSchema(t.storePath()); err != nil {
			return res, restartOld(fmt.Errorf("check the store before installing: %w", err))
		}
	}
	if schema > o.StoreSchema {
		return res, restartOld(fmt.Errorf("this binary (%s) reads store schema %d, but %s was written by a newer Cabinet (schema %d): install a newer Cabinet instead; nothing was changed",
			o.Version, o.StoreSchema, t.storePath(), schema))
	}
	keptStore := false
	if upgrade && schema > 0 {
		// The copy a rollback restores if the new binary migrates the
		// store; removed once the new daemon answers.
		if err := copyFile(t.storePath(), t.storeCopy(), 0o600); err != nil {
			return res, restartOld(fmt.Errorf("keep a copy of the store before upgrading: %w", err))
		}
		keptStore = true
	}

	m := manifest{Version: o.Version, Commit: o.Commit, ClosePort: closePort, RetroArchPort: port, Service: l.ServiceName}
	for _, c := range pending {
		created, err := ensureDir(filepath.Dir(c.path))
		if err != nil {
			return res, restartOld(err)
		}
		m.Dirs = append(m.Dirs, created...)
		if c.binary {
			if err := installBinary(o.Source, c.path, c.exists); err != nil {
				return res, restartOld(err)
			}
			verb := "installed"
			if c.exists {
				verb = "upgraded (the previous one kept as " + filepath.Base(t.prevBinary()) + ")"
			}
			res.Changed = append(res.Changed, fmt.Sprintf("binary %s %s", c.path, verb))
			continue
		}
		if err := writeFile(c.path, c.content, c.mode); err != nil {
			return res, restartOld(err)
		}
		switch {
		case c.secret:
			res.Changed = append(res.Changed, "secret saved in "+c.path)
		case c.exists:
			res.Changed = append(res.Changed, "updated "+c.path)
		default:
			res.Changed = append(res.Changed, "wrote "+c.path)
		}
	}
	if confChanged {
		if err := batoconf.WriteFile(t.Conf, newConf); err != nil {
			return res, restartOld(fmt.Errorf("save %s: %w", t.Conf, err))
		}
		res.Changed = append(res.Changed, "saved settings in "+t.Conf)
	}
	if prev.ClosePort && !closePort && o.RemoveFirewall != nil {
		if err := o.RemoveFirewall(ctx, prev.RetroArchPort); err != nil {
			res.Changed = append(res.Changed, fmt.Sprintf("the firewall rule on RetroArch's port %d could not be removed (%v); it goes at the next reboot", prev.RetroArchPort, err))
		} else {
			res.Changed = append(res.Changed, fmt.Sprintf("removed the firewall rule: RetroArch's port %d is open to the LAN again", prev.RetroArchPort))
		}
	}
	if needToken && o.NewToken != nil {
		if err := o.NewToken(); err != nil {
			return res, restartOld(fmt.Errorf("create the MCP token: %w", err))
		}
		res.Changed = append(res.Changed, "created the MCP token (cabinet token show prints it)")
	}
	// What this install owns, for uninstall and the next install.
	m.merge(prev)
	for _, s := range scripts {
		m.addFile(s.Path, []byte(s.Content))
	}
	for _, c := range pending {
		if c.secret {
			m.addFile(c.path, c.content)
		}
	}
	m.Binary = srcSum
	for _, kv := range kvs {
		m.addKey(kv.Key)
	}
	if err := m.write(t.manifestPath()); err != nil {
		return res, restartOld(err)
	}

	if running && !restart {
		if len(res.Changed) == 0 {
			res.Changed = nil
		}
		return res, nil
	}
	if err := svc.Start(ctx); err != nil {
		return res, fmt.Errorf("start the service: %w", err)
	}
	if !running {
		res.Changed = append(res.Changed, "started the service")
	}
	wctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	err = svc.Answering(wctx)
	cancel()
	if err == nil {
		if keptStore {
			os.Remove(t.storeCopy())
		}
		return res, nil
	}
	why := fmt.Errorf("the daemon did not answer within %s: %v%s", o.StartTimeout, err, logTail(svc.Log()))
	if !upgrade {
		return res, fmt.Errorf("%w; see `cabinet doctor`", why)
	}
	return res, rollback(ctx, t, svc, o, schema, keptStore, why)
}

// rollback puts the previous binary back after a failed upgrade, restores
// the store if the new binary changed its schema, and restarts the old one.
func rollback(ctx context.Context, t Target, svc Service, o Options, schema uint64, keptStore bool, why error) error {
	fmt.Fprintf(o.Out, "The new binary did not start: rolling back.\n")
	if err := svc.Stop(ctx); err != nil {
		return fmt.Errorf("%w; and stopping it failed: %v; the previous binary is %s", why, err, t.prevBinary())
	}
	if err := os.Rename(t.prevBinary(), t.Layout.Binary); err != nil {
		return fmt.Errorf("%w; and putting the previous binary back failed: %v", why, err)
	}
	restored := ""
	if keptStore {
		now, err := o.ReadSchema(t.storePath())
		if err != nil || now != schema {
			if err := os.Rename(t.storeCopy(), t.storePath()); err != nil {
				return fmt.Errorf("%w; and restoring the store from %s failed: %v", why, t.storeCopy(), err)
			}
			restored = "; the store was restored from before the upgrade"
		} else {
			os.Remove(t.storeCopy())
		}
	}
	if err := svc.Start(ctx); err != nil {
		return fmt.Errorf("%w; the previous binary is back%s but its service did not start: %v", why, restored, err)
	}
	wctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	if err := svc.Answering(wctx); err != nil {
		return fmt.Errorf("%w; the previous binary is back%s but does not answer either: %v", why, restored, err)
	}
	return fmt.Errorf("%w: %w; the previous binary is back and running%s", ErrRolledBack, why, restored)
}

func dryRun(o Options, t Target, pending []change, conf, newConf []byte, token, upgrade, portChanged bool, srcSum string) error {
	w := o.Out
	n := 0
	for _, c := range pending {
		n++
		switch {
		case c.binary && c.exists:
			fmt.Fprintf(w, "would upgrade %s to %s (sha256 %s), keeping the previous one as %s, after stopping the service\n", c.path, o.Version, srcSum[:16], filepath.Base(t.prevBinary()))
		case c.binary:
			fmt.Fprintf(w, "would install %s %s (sha256 %s)\n", c.path, o.Version, srcSum[:16])
		case c.secret:
			fmt.Fprintf(w, "would save a secret in %s (mode 0600; not shown)\n", c.path)
		default:
			fmt.Fprint(w, Diff(c.path, c.old, c.content))
		}
	}
	if d := Diff(t.Conf, conf, newConf); d != "" {
		n++
		fmt.Fprint(w, d)
	}
	if token {
		n++
		fmt.Fprintf(w, "would create the MCP token in %s\n", t.StateDir)
	}
	if n == 0 {
		fmt.Fprintf(w, "nothing to change: Cabinet %s is installed as it would be\n", o.Version)
		return nil
	}
	fmt.Fprintf(w, "dry run: %d change(s) shown, nothing written\n", n)
	return nil
}

func logTail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return "; its last words:\n  " + strings.Join(lines, "\n  ")
}

// secretFileName names the file holding a secret key's value:
// cabinet.mqtt.password → mqtt.password.
func secretFileName(key string) string { return strings.TrimPrefix(key, "cabinet.") }

func readConf(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > batoconf.MaxSize {
		return nil, fmt.Errorf("%s is %d bytes, larger than batocera.conf ever is: check the file before installing", path, len(b))
	}
	return b, nil
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", nil
		}
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ensureDir creates dir and its missing parents and returns the ones it
// created, outermost first (uninstall removes them when empty).
func ensureDir(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	sort.Strings(missing)
	return missing, nil
}

// writeFile replaces path atomically (temp file, fsync, rename). The mode
// is set but not relied on: on exFAT or vfat it does not stick, and every
// script Cabinet installs is run through a shell anyway.
func writeFile(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	_ = tmp.Chmod(mode)
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	_ = tmp.Chmod(mode)
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	syncDir(filepath.Dir(dst))
	return nil
}

// installBinary copies src into place as dst; an existing dst becomes
// dst.prev first. The new file is complete and fsynced before it takes the
// name, so a power cut leaves either binary, never half of one.
func installBinary(src, dst string, exists bool) error {
	next := dst + ".next"
	if err := copyFile(src, next, 0o755); err != nil {
		return fmt.Errorf("copy the binary: %w", err)
	}
	if exists {
		if err := os.Rename(dst, dst+".prev"); err != nil {
			os.Remove(next)
			return fmt.Errorf("keep the previous binary: %w", err)
		}
	}
	if err := os.Rename(next, dst); err != nil {
		if exists {
			os.Rename(dst+".prev", dst)
		}
		return fmt.Errorf("put the binary in place: %w", err)
	}
	syncDir(filepath.Dir(dst))
	return nil
}
