// Package deploy installs or upgrades Cabinet on a cabinet from another
// computer (`cabinet deploy`), over SSH with the system's OpenSSH client:
// it asks the cabinet its architecture, builds or picks the matching static
// binary, copies it with `cat >` (Batocera's Dropbear has no SFTP, which
// OpenSSH ≥ 9's scp needs), checks the copy's SHA-256 and runs its
// `install` there with the settings, secrets going over standard input.
package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode"
)

// RootKey is the setting that moves every Cabinet path under a directory
// (tests use it to deploy into a temporary fake root).
const RootKey = "cabinet.paths.root"

// Deadlines of the steps. A step that runs out is one clear error, never a
// hang.
const (
	probeTimeout       = 30 * time.Second
	interactiveTimeout = 3 * time.Minute // a person typing a password
	uploadTimeout      = 10 * time.Minute
	verifyTimeout      = time.Minute
	installTimeout     = 10 * time.Minute
	cleanupTimeout     = 15 * time.Second
)

// Options say what to deploy where.
type Options struct {
	Host       string   // [user@]host, or a Host alias of the ssh config
	SSHCommand []string // the ssh client and its leading arguments; empty: ssh
	Sets       []string // key=value, passed to the remote install as --set
	Saves      []string // key=value, passed as --save (written to batocera.conf)
	// SecretKeys are the --save-secret keys: their values are read here
	// (see IsTerminal) and written to the remote install's standard input,
	// one per line, never into a command line.
	SecretKeys []string
	// Binary is the file to copy. Empty: build it from SourceDir, else take
	// the release binary beside Executable.
	Binary     string
	SourceDir  string // a Cabinet checkout to build from (FindSourceTree), or ""
	Executable string // the running program, beside which release binaries sit, or ""
	// DryRun still copies the binary (to a temporary name, removed
	// afterwards) to run `install --dry-run`, which shows what would change
	// and changes nothing.
	DryRun         bool
	Stdin          io.Reader // the secrets, one per line, when it is not a terminal
	Stdout, Stderr io.Writer // the remote install's output; deploy's progress goes to Stderr
	// IsTerminal says stdin is a terminal: secrets are asked for on
	// /dev/tty without echo, and ssh may ask for a password or to confirm a
	// new host key. Otherwise ssh runs with BatchMode, so it fails instead
	// of asking.
	IsTerminal bool

	// subcommand is what runs on the cabinet with the copied binary;
	// "install" unless a test runs something else.
	subcommand string
}

// Run deploys. The exit code is the remote install's when it ran, else 1;
// err says what went wrong and what to do, in one sentence.
func Run(ctx context.Context, o Options) (int, error) {
	if err := o.normalize(); err != nil {
		return 1, err
	}
	root, err := rootOf(o.Sets)
	if err != nil {
		return 1, err
	}
	secrets, err := readSecrets(ctx, o)
	if err != nil {
		return 1, err
	}
	tmp, err := privateDir()
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(tmp)
	d := &deployer{o: o, ssh: &sshClient{argv: o.SSHCommand, host: o.Host, controlPath: filepath.Join(tmp, "%C"), batch: true}}
	defer d.ssh.close()
	return d.run(ctx, root, tmp, secrets)
}

// deployer is one run of Run.
type deployer struct {
	o             Options
	ssh           *sshClient
	passwordAsked bool // the cabinet refused our keys, so ssh asked for a password
}

func (d *deployer) run(ctx context.Context, root, tmp string, secrets []string) (int, error) {
	o := d.o
	if o.DryRun {
		fmt.Fprintln(o.Stderr, "dry run: the binary is copied to a temporary name to run `install --dry-run`, which changes nothing, and removed afterwards")
	}
	cab, err := d.connect(ctx, root)
	if err != nil {
		return 1, d.fail(fmt.Sprintf("read %s's architecture", o.Host), err)
	}
	if cab.batocera == "" {
		fmt.Fprintf(o.Stderr, "warning: %s has no %s: not Batocera? carrying on\n", o.Host, path.Join("/", root, VersionFile))
		fmt.Fprintf(o.Stderr, "cabinet: %s\n", cab.target.Machine)
	} else {
		fmt.Fprintf(o.Stderr, "cabinet: %s, Batocera %s\n", cab.target.Machine, cab.batocera)
	}
	bin, err := pickBinary(ctx, o, cab.target, tmp, o.Stderr)
	if err != nil {
		return 1, err
	}
	p := pathsUnder(root)
	if err := d.upload(ctx, bin, p); err != nil {
		d.cleanup(ctx, p)
		return 1, err
	}
	if code, err := d.install(ctx, p, secrets); err != nil {
		return code, err
	}
	switch {
	case o.DryRun:
		fmt.Fprintf(o.Stderr, "dry run done: nothing was installed on %s\n", o.Host)
	default:
		fmt.Fprintf(o.Stderr, "Cabinet is installed on %s (%s)\n", o.Host, bin.what)
	}
	return 0, nil
}

// connect reads the cabinet's architecture and version, which opens the
// shared connection. The first try never prompts; on a terminal, when it
// failed for want of a password or of a confirmed host key, ssh tries again
// and asks.
func (d *deployer) connect(ctx context.Context, root string) (cabinet, error) {
	fmt.Fprintf(d.o.Stderr, "connecting to %s…\n", d.o.Host)
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	cab, err := probe(pctx, d.ssh, root, nil)
	cancel()
	var se *sshError
	if err == nil || !d.o.IsTerminal || !errors.As(err, &se) || (se.kind != authRefused && se.kind != hostKeyUnknown) {
		return cab, err
	}
	if se.kind == authRefused {
		d.passwordAsked = true
		fmt.Fprintf(d.o.Stderr, "%s asks for a password (a fresh Batocera's root password is linux)\n", d.o.Host)
	}
	d.ssh.batch = false
	ictx, cancel := context.WithTimeout(ctx, interactiveTimeout)
	defer cancel()
	// ssh's messages ("Permission denied, please try again.") matter now.
	cab, err = probe(ictx, d.ssh, root, d.o.Stderr)
	if err == nil && d.passwordAsked {
		fmt.Fprintf(d.o.Stderr, "tip: `ssh-copy-id %s` installs your key there, so that deploy need not ask again\n", loginOf(d.o.Host))
	}
	return cab, err
}

// upload copies the binary to p.final and checks the copy's SHA-256.
func (d *deployer) upload(ctx context.Context, bin binaryFile, p remotePaths) error {
	f, err := os.Open(bin.path)
	if err != nil {
		return fmt.Errorf("open the binary: %w", err)
	}
	defer f.Close()
	size := ""
	if fi, err := f.Stat(); err == nil {
		size = " (" + humanSize(fi.Size()) + ")"
	}
	fmt.Fprintf(d.o.Stderr, "copying %s%s to %s…\n", bin.what, size, p.final)
	// Written beside its final name and renamed, so an interrupted copy
	// never leaves a truncated executable under that name.
	copyCmd := "mkdir -p " + Quote(p.dir) + " && cat > " + Quote(p.tmp) + " && chmod 0755 " + Quote(p.tmp) + " && mv -f " + Quote(p.tmp) + " " + Quote(p.final)
	uctx, cancel := context.WithTimeout(ctx, uploadTimeout)
	defer cancel()
	if err := d.ssh.run(uctx, copyCmd, f, nil, nil); err != nil {
		return d.fail("copy the binary to "+d.o.Host, err)
	}
	var out strings.Builder
	vctx, cancel := context.WithTimeout(ctx, verifyTimeout)
	defer cancel()
	if err := d.ssh.run(vctx, "sha256sum "+Quote(p.final), nil, &out, nil); err != nil {
		return d.fail("check the copy on "+d.o.Host+" (sha256sum)", err)
	}
	got := parseSHA256(out.String())
	if got != bin.sha256 {
		return fmt.Errorf("the copy on %s is damaged (sha256 %q, sent %s): run deploy again", d.o.Host, got, bin.sha256)
	}
	fmt.Fprintf(d.o.Stderr, "copy verified: sha256 %s\n", got)
	return nil
}

// humanSize is n bytes for a progress line.
func humanSize(n int64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d bytes", n)
}

// parseSHA256 is the hash sha256sum printed: its first word, when that is
// 64 hex digits, else "".
func parseSHA256(out string) string {
	f := strings.Fields(out)
	if len(f) == 0 || len(f[0]) != 64 {
		return ""
	}
	for _, r := range f[0] {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return ""
		}
	}
	return f[0]
}

// install runs the copied binary's install on the cabinet, its output
// streamed to the user and the secrets written to its standard input, and
// removes the binary in the same remote command whatever install did. The
// code is install's exit status when it ran, else 1.
func (d *deployer) install(ctx context.Context, p remotePaths, secrets []string) (int, error) {
	cmd := InstallCommand(p.final, d.subcommand(), d.installArgs())
	var stdin io.Reader
	if len(secrets) > 0 {
		stdin = strings.NewReader(strings.Join(secrets, "\n") + "\n")
	}
	sub := d.subcommand()
	if d.o.DryRun {
		sub += " --dry-run"
	}
	fmt.Fprintf(d.o.Stderr, "running %s on %s…\n", sub, d.o.Host)
	ictx, cancel := context.WithTimeout(ctx, installTimeout)
	defer cancel()
	err := d.ssh.run(ictx, cmd, stdin, d.o.Stdout, d.o.Stderr)
	if err == nil {
		return 0, nil
	}
	var re *remoteExit
	if errors.As(err, &re) {
		code := re.code
		if code <= 0 {
			code = 1 // killed by a signal
		}
		return code, fmt.Errorf("%s on %s failed (exit status %d): its output is above", d.subcommand(), d.o.Host, re.code)
	}
	d.cleanup(ctx, p) // install did not finish, nor remove the copy
	return 1, d.fail("run "+d.subcommand()+" on "+d.o.Host, err)
}

// fail is err of the step what. A failed login is already the sentence to
// show, whichever step met it; other errors say which step failed.
func (d *deployer) fail(what string, err error) error {
	if se := (*sshError)(nil); errors.As(err, &se) {
		return se
	}
	return fmt.Errorf("%s: %w", what, err)
}

// InstallCommand is the remote command line that runs final's subcommand
// with args and then removes final, keeping the subcommand's exit status.
// Every word is quoted.
func InstallCommand(final, subcommand string, args []string) string {
	return command(append([]string{final, subcommand}, args...)...) + "; rc=$?; rm -f " + Quote(final) + "; exit $rc"
}

func (d *deployer) subcommand() string {
	if d.o.subcommand != "" {
		return d.o.subcommand
	}
	return "install"
}

// installArgs are the flags passed through to the remote install.
func (d *deployer) installArgs() []string {
	var args []string
	if d.o.DryRun {
		args = append(args, "--dry-run")
	}
	for _, s := range d.o.Sets {
		args = append(args, "--set", s)
	}
	for _, s := range d.o.Saves {
		args = append(args, "--save", s)
	}
	for _, k := range d.o.SecretKeys {
		args = append(args, "--save-secret", k)
	}
	return args
}

// cleanup removes what an unfinished deploy left on the cabinet, best
// effort: the connection may be what failed.
func (d *deployer) cleanup(ctx context.Context, p remotePaths) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	d.ssh.run(cctx, "rm -f "+Quote(p.tmp)+" "+Quote(p.final), nil, nil, nil)
}

// normalize fills the defaults and refuses what cannot work.
func (o *Options) normalize() error {
	if o.Host == "" {
		return errors.New("name the cabinet: cabinet deploy root@HOST")
	}
	if strings.HasPrefix(o.Host, "-") || strings.IndexFunc(o.Host, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return fmt.Errorf("%q is not a host name: give [user@]host", o.Host)
	}
	if len(o.SSHCommand) == 0 {
		o.SSHCommand = []string{"ssh"}
	}
	for _, s := range append(append([]string{}, o.Sets...), o.Saves...) {
		if !strings.Contains(s, "=") {
			return fmt.Errorf("%q: want key=value", s)
		}
	}
	for _, k := range o.SecretKeys {
		if k == "" || strings.Contains(k, "=") {
			return fmt.Errorf("--save-secret %q: give the key only; its value is asked for, or read from standard input, never taken from the command line", k)
		}
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	return nil
}

// rootOf is the last cabinet.paths.root among sets, cleaned; "" when none.
func rootOf(sets []string) (string, error) {
	root := ""
	for _, s := range sets {
		if k, v, _ := strings.Cut(s, "="); strings.TrimSpace(k) == RootKey {
			root = strings.TrimSpace(v)
		}
	}
	if root == "" {
		return "", nil
	}
	if !path.IsAbs(root) {
		return "", fmt.Errorf("%s=%s: give an absolute path on the cabinet", RootKey, root)
	}
	root = path.Clean(root)
	if root == "/" {
		return "", nil
	}
	return root, nil
}

// loginOf is host with root@ added when it names no user (Batocera has
// only root).
func loginOf(host string) string {
	if strings.Contains(host, "@") {
		return host
	}
	return "root@" + host
}

// privateDir makes a 0700 directory for the build and the connection
// socket. Unix socket paths are short (104 bytes on macOS), so a long
// TMPDIR gives way to /tmp.
func privateDir() (string, error) {
	dir, err := os.MkdirTemp("", "cabinet-deploy-")
	if err == nil && len(dir) > 60 {
		os.RemoveAll(dir)
		dir, err = os.MkdirTemp("/tmp", "cabinet-deploy-")
	}
	if err != nil {
		return "", fmt.Errorf("make a temporary directory: %w", err)
	}
	return dir, nil
}
