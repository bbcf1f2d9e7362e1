package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/batocera-cabinet/cabinet/packaging/deploy"
)

// deployCommand runs on a computer, not on the cabinet: it loads no
// configuration here, and its --set flags go to the cabinet's install.
type deployCommand struct{ env *env }

// sshCommandEnv names the ssh client command, like GIT_SSH_COMMAND.
const sshCommandEnv = "CABINET_SSH_COMMAND"

// deployKVFlag collects repeated key=value flags passed through to the
// cabinet (which checks the keys and values).
type deployKVFlag []string

func (f *deployKVFlag) String() string { return strings.Join(*f, " ") }
func (f *deployKVFlag) Set(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("want key=value, such as cabinet.mqtt.broker=tcp://homeassistant.lan:1883")
	}
	*f = append(*f, v)
	return nil
}

// deployKeyFlag collects repeated --save-secret KEY.
type deployKeyFlag []string

func (f *deployKeyFlag) String() string { return strings.Join(*f, " ") }
func (f *deployKeyFlag) Set(v string) error {
	if strings.Contains(v, "=") {
		return fmt.Errorf("give the key only: its value is asked for, or read from standard input, never taken from the command line")
	}
	*f = append(*f, v)
	return nil
}

func (c *deployCommand) Run(ctx context.Context, args []string) error {
	var sets setFlag
	var saves deployKVFlag
	var secrets deployKeyFlag
	fs := newFlags(c.env, "deploy", "[user@]host", `Install or upgrade Cabinet on a Batocera cabinet from this computer, over SSH
with the system's ssh client (your ~/.ssh/config, keys and agent apply). It asks the
cabinet its architecture, builds the matching static binary when run from a Cabinet
checkout with Go installed (else takes cabinet-linux-<arch> beside this program,
checked against SHA256SUMS there, or --binary), copies it with ssh (Batocera's
Dropbear has no SFTP), checks its SHA-256 and runs its `+"`install`"+` there with --set,
--save and --save-secret, showing its output. Exits with install's status.
Secrets never go on a command line: each --save-secret is asked for here without
echo, or read one per line from standard input when that is not a terminal, and
sent over ssh's standard input. A fresh cabinet's root password is linux; run
ssh-copy-id root@HOST once so deploy need not ask. Without a terminal ssh never
asks (BatchMode): an unknown host key or a password prompt is an error to fix.
Examples:
  cabinet deploy root@batocera.local --save cabinet.mqtt.broker=tcp://ha.lan:1883 \
      --save cabinet.mqtt.username=cabinet --save-secret cabinet.mqtt.password
  cabinet deploy --dry-run root@batocera.local`, &sets)
	fs.Var(&saves, "save", "save a cabinet.* setting into the cabinet's batocera.conf: key=value (repeatable)")
	fs.Var(&secrets, "save-secret", "save a secret setting, its value asked for or read from standard input: KEY (repeatable)")
	sshCommand := fs.String("ssh-command", "", "the ssh client and its arguments, split at spaces (no quoting), such as \"ssh -F my_config\" (default $"+sshCommandEnv+", else ssh)")
	binary := fs.String("binary", "", "copy this binary instead of building or picking one")
	dryRun := fs.Bool("dry-run", false, "copy the binary to a temporary name and run install --dry-run, which shows what would change and changes nothing")
	hosts, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(hosts) != 1 {
		return fmt.Errorf("%w: name one cabinet: cabinet deploy [flags] root@HOST", errUsage)
	}
	ssh := *sshCommand
	if ssh == "" {
		ssh = deployEnv(c.env.Environ, sshCommandEnv)
	}
	opts := deploy.Options{
		Host:       hosts[0],
		SSHCommand: strings.Fields(ssh),
		Sets:       sets,
		Saves:      saves,
		SecretKeys: secrets,
		Binary:     *binary,
		DryRun:     *dryRun,
		Stdin:      c.env.Stdin,
		Stdout:     c.env.Stdout,
		Stderr:     c.env.Stderr,
		IsTerminal: deploy.IsTerminal(c.env.Stdin),
	}
	if *binary == "" {
		if wd, err := os.Getwd(); err == nil {
			opts.SourceDir = deploy.FindSourceTree(wd)
		}
		if exe, err := os.Executable(); err == nil {
			opts.Executable = exe
		}
	}
	code, err := deploy.Run(ctx, opts)
	if err != nil {
		return &codedError{msg: err.Error(), code: code}
	}
	return nil
}

// parseInterspersed parses flags before and after the positional
// arguments (`deploy root@host --set k=v` as well as `deploy --set k=v
// root@host`), which the flag package alone stops at; "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// deployEnv is the value of key in environ, "" when unset.
func deployEnv(environ []string, key string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}
