// Package esevents fires EmulationStation events at hook scripts exactly the way Batocera's ES
// does on Linux (es-core/src/Scripting.cpp fireEvent + utils/Platform.cpp ProcessStartInfo::run):
// the same directories and passes, the same unescaped command string run by /bin/sh -c inside the
// same log-redirecting wrapper, asynchronously except for root generic scripts on quit. It also
// runs Batocera configgen's user scripts (emulatorlauncher callExternalScripts). The simulator and
// the hook tests use it so that a hook meets the same argv quirks it meets on a cabinet.
package esevents

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Directories, relative to the file-system root, that ES and configgen read on Batocera.
const (
	UserScriptsDir    = "userdata/system/configs/emulationstation/scripts" // Paths.cpp:48-53
	SystemScriptsDir  = "usr/share/emulationstation/scripts"
	RuntimeScriptsDir = "var/run/emulationstation/scripts" // tmpfs, Scripting.cpp:163
	LogsDir           = "userdata/system/logs"             // Paths.cpp:53, mLogPath

	ConfiggenSystemScriptsDir = "usr/share/batocera/configgen/scripts" // batoceraPaths SYSTEM_SCRIPTS
	ConfiggenUserScriptsDir   = "userdata/system/scripts"              // batoceraPaths USER_SCRIPTS
)

// Names of the files in the log directory that every script invocation truncates.
const (
	StdoutLog = "es_script_stdout.log"
	StderrLog = "es_script_stderr.log"
)

// Firer fires ES events. The zero value fires at a real Batocera's paths (/userdata, /usr/share,
// /var/run); set Root to fire inside a fake tree. A Firer is safe for concurrent use and must not
// be copied after first use.
type Firer struct {
	// Root is prepended to every Batocera path below; "" means "/".
	Root string
	// ScriptsDirs, if set, replaces the three scripts/ directories ES reads (user, system,
	// runtime, in that order) derived from Root.
	ScriptsDirs []string
	// LogDir receives es_script_stdout.log and es_script_stderr.log; default <Root>/userdata/system/logs,
	// created if missing when Root or LogDir is set. ES puts it unquoted into the shell command, so
	// it must be a plain path (no spaces or shell characters: mind t.TempDir names with parentheses).
	LogDir string
	// LogsDisabled sends script output to /dev/null, as ES does when its LogLevel is "disabled".
	LogsDisabled bool
	// Dir is the scripts' working directory, ES's cwd; default <Root>/userdata.
	Dir string
	// Home is $HOME for the scripts; default <Root>/userdata/system.
	Home string
	// Env is added after the inherited environment and HOME (later entries win).
	Env []string
	// Stderr is ES's own stderr, where sh reports a command line it cannot parse (the hook then
	// never runs). nil discards it.
	Stderr io.Writer
	// OnError receives what Fire cannot return (fork failures, unreadable directories).
	OnError func(error)

	mu      sync.Mutex
	running map[*script]struct{} // started and not yet exited: what Kill signals
	pending int                  // started and not yet reaped: what Wait waits for
	idle    chan struct{}        // closed when pending drops to 0
}

// FireFunc adapts a function to the small Fire interface the fake ES declares.
type FireFunc func(event string, args ...string)

// Fire calls fn.
func (fn FireFunc) Fire(event string, args ...string) { fn(event, args...) }

// Fire fires event like Scripting::fireEvent; args are arg1..arg3 (more is a programming error
// and panics). It returns once every script has been started, and only waits for root generic
// scripts of "quit", with no timeout, as ES does. Errors go to OnError.
func (f *Firer) Fire(event string, args ...string) {
	if err := f.FireContext(context.Background(), event, args...); err != nil && f.OnError != nil {
		f.OnError(err)
	}
}

// FireContext is Fire with a context that bounds the synchronous wait for root "quit" scripts
// (ES has none: cancelling kills the script's process group, which ES would never do).
func (f *Firer) FireContext(ctx context.Context, event string, args ...string) error {
	if len(args) > 3 {
		panic(fmt.Sprintf("esevents: ES fires at most 3 arguments, got %d for %q", len(args), event))
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fire %s: %w", event, err)
	}
	wrapper, err := f.wrapper()
	if err != nil {
		return fmt.Errorf("fire %s: %w", event, err)
	}
	scriptsDirs := f.scriptsDirs()
	var errs []error

	// Pass 1: per-event directories, no event name, never waited for.
	eventDirs := make([]string, len(scriptsDirs))
	for i, d := range scriptsDirs {
		eventDirs[i] = d + "/" + event
	}
	for _, dir := range distinct(eventDirs) {
		scripts, err := perEventScripts(dir)
		errs = append(errs, err)
		for _, s := range scripts {
			errs = append(errs, f.start(ctx, wrapper(CommandLine(s, "", args...)), false))
		}
	}

	// Pass 2: root generic scripts with the event name first; waitForExit = (event == "quit").
	for _, dir := range distinct(scriptsDirs) {
		scripts, err := rootScripts(dir)
		errs = append(errs, err)
		for _, s := range scripts {
			errs = append(errs, f.start(ctx, wrapper(CommandLine(s, event, args...)), event == "quit"))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("fire %s: %w", event, err)
	}
	return nil
}

// ScriptsDirsInUse returns the three scripts/ directories Fire reads, in ES's order.
func (f *Firer) ScriptsDirsInUse() []string { return f.scriptsDirs() }

// LogDirInUse returns the directory that receives es_script_stdout.log and es_script_stderr.log.
func (f *Firer) LogDirInUse() string {
	if f.LogDir != "" {
		return f.LogDir
	}
	return f.under(LogsDir)
}

func (f *Firer) scriptsDirs() []string {
	if len(f.ScriptsDirs) > 0 {
		return f.ScriptsDirs
	}
	return []string{f.under(UserScriptsDir), f.under(SystemScriptsDir), f.under(RuntimeScriptsDir)}
}

func (f *Firer) under(rel string) string {
	root := f.Root
	if root == "" {
		root = "/"
	}
	return filepath.Join(root, rel)
}

func (f *Firer) dir() string {
	if f.Dir != "" {
		return f.Dir
	}
	return f.under("userdata")
}

func (f *Firer) environ() []string {
	home := f.Home
	if home == "" {
		home = f.under("userdata/system")
	}
	env := append(os.Environ(), "HOME="+home)
	return append(env, f.Env...)
}

// wrapper returns the function that wraps a command line like ProcessStartInfo::run.
func (f *Firer) wrapper() (func(string) string, error) {
	if f.LogsDisabled {
		return func(c string) string { return Wrap(c, os.DevNull, os.DevNull) }, nil
	}
	logDir := strings.TrimRight(f.LogDirInUse(), "/")
	if !shellPlain(logDir) {
		return nil, fmt.Errorf("log dir %q: ES puts it unquoted into a shell command; use a path without spaces or shell characters", logDir)
	}
	if _, err := os.Stat(logDir); errors.Is(err, os.ErrNotExist) && (f.Root != "" || f.LogDir != "") {
		// Batocera always has it; a fake tree may not, and sh would then silently run nothing.
		// The real /userdata is never created from here.
		if err := os.MkdirAll(logDir, 0o755); err != nil {
			return nil, fmt.Errorf("create log dir: %w", err)
		}
	}
	stderrPath, stdoutPath := logDir+"/"+StderrLog, logDir+"/"+StdoutLog
	return func(c string) string { return Wrap(c, stderrPath, stdoutPath) }, nil
}

// distinct is VectorHelper::distinct: first occurrence wins, order kept.
func distinct(dirs []string) []string {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		dup := false
		for _, o := range out {
			dup = dup || o == d
		}
		if !dup {
			out = append(out, d)
		}
	}
	return out
}

// perEventScripts is getDirContent(dir) (FileSystemUtil.cpp:355-460): every entry in raw
// readdir order, dot-files skipped, sub-directories kept (sh then fails on them).
func perEventScripts(dir string) ([]string, error) {
	dir = GenericPath(dir)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, nil
	}
	entries, err := readDirRaw(dir)
	var out []string
	for _, e := range entries {
		full := GenericPath(dir + "/" + e.Name())
		if name := fileName(full); name != "" && name[0] == '.' {
			continue
		}
		out = append(out, full)
	}
	return out, err
}

// rootScripts is fireEvent's pass 2 over getDirectoryFiles(dir) (Scripting.cpp:191-207): raw
// readdir order, directories (and symlinks to them) skipped, dot-files NOT skipped, extension
// checked case-insensitively.
func rootScripts(dir string) ([]string, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, nil
	}
	dir = GenericPath(dir)
	entries, err := readDirRaw(dir)
	var out []string
	for _, e := range entries {
		full := GenericPath(dir + "/" + e.Name())
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			st, err := os.Stat(full)
			isDir = err == nil && st.IsDir()
		}
		if isDir || !rootScriptExtension(full) {
			continue
		}
		out = append(out, full)
	}
	return out, err
}

// readDirRaw lists dir in directory order; os.ReadDir would sort, which ES does not.
func readDirRaw(dir string) ([]os.DirEntry, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return entries, fmt.Errorf("list %s: %w", dir, err)
	}
	return entries, nil
}
