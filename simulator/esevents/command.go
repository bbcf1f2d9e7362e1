package esevents

import (
	"strings"

	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// escapedChars are the bytes before which ES's getEscapedPath inserts a backslash
// (FileSystemUtil.cpp:679).
const escapedChars = "\\ '\"!$^&*(){}[]?;<>"

// CommandLine builds the string ES hands to /bin/sh for one script, as Scripting.cpp
// executeScript does on Linux (lines 88-113). event is "" for a per-event-directory script and
// the event name for a root generic script. ES passes at most three arguments; this builder takes
// any number so it can be fuzzed, and stops at the first empty one as ES does.
//
// Nothing is escaped: the result is what makes ES hooks break on names with `(` and expand `$`.
func CommandLine(script, event string, args ...string) string {
	var b strings.Builder
	if strings.Contains(script, " ") {
		b.WriteString(`"` + script + `"`)
	} else {
		b.WriteString(script)
	}
	if event != "" {
		b.WriteString(" " + event)
	}
	for _, arg := range args {
		if arg == "" {
			break
		}
		data := arg
		if data[0] == '"' {
			// ES tests startsWith twice (the second was meant to be endsWith), so the last byte
			// goes whatever it is. substr(1, size-2) of a one-byte string is "".
			if len(data) >= 2 {
				data = data[1 : len(data)-1]
			} else {
				data = ""
			}
		}
		data = strings.ReplaceAll(data, `"`, "")
		if strings.Contains(data, " ") {
			b.WriteString(` "` + data + `"`)
		} else {
			b.WriteString(" " + data)
		}
	}
	return b.String()
}

// Wrap is ProcessStartInfo::run's wrapper (Platform.cpp:161): the exit status travels through
// fd 3 so that stdout can go through head -300. The log paths are not quoted, as in ES.
func Wrap(command, stderrPath, stdoutPath string) string {
	return "((((" + command + " 2> " + stderrPath + " ; echo $? >&3) | head -300 > " + stdoutPath +
		") 3>&1) | (read xs; exit $xs))"
}

// EscapedPath is ES's Utils::FileSystem::getEscapedPath on Linux (FileSystemUtil.cpp:670-705),
// which game-start applies to its first argument. It first makes the path generic as ES does
// (backslashes become slashes, "//" collapses, trailing slashes go), then inserts a backslash
// before each of \ '"!$^&*(){}[]?;<>. For a path that is already generic (every path ES holds
// for a ROM) the hook's de-escaping (drop a backslash before any of those bytes) inverts it.
func EscapedPath(path string) string {
	path = GenericPath(path)
	var b strings.Builder
	b.Grow(len(path) + len(path)/4)
	for i := 0; i < len(path); i++ {
		if strings.IndexByte(escapedChars, path[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(path[i])
	}
	return b.String()
}

// Stem is ES's Utils::FileSystem::getStem, game-start's second argument.
func Stem(path string) string { return library.Stem(path) }

// GameStartArgs are game-start's arguments for a ROM path and display name, as FileData.cpp:713-716
// computes them: escaped path, stem, name.
func GameStartArgs(romPath, name string) []string {
	return []string{EscapedPath(romPath), Stem(romPath), name}
}

// GameSelectedArgs are game-selected's arguments (FileData.cpp:1843, SystemScreenSaver.cpp:173):
// system, raw path (not escaped), name — a different order from game-start.
func GameSelectedArgs(system, romPath, name string) []string {
	return []string{system, romPath, name}
}

// GenericPath is Utils::FileSystem::getGenericPath (FileSystemUtil.cpp:642-668).
func GenericPath(path string) string {
	if path == "" {
		return path
	}
	path = strings.TrimPrefix(path, `\\?\`)
	path = strings.ReplaceAll(path, `\`, "/")
	for strings.Contains(path, "//") {
		path = strings.ReplaceAll(path, "//", "/")
	}
	return strings.TrimRight(path, "/")
}

// fileName is Utils::FileSystem::getFileName; like ES it never looks at byte 0.
func fileName(path string) string {
	for i := len(path) - 1; i > 0; i-- {
		if path[i] == '/' || path[i] == '\\' {
			return path[i+1:]
		}
	}
	return path
}

// rootScriptExtension reports whether ES runs a root generic script with this path
// (Scripting.cpp:151, 201-203). ES's extension is everything from the last '.' of the whole path,
// lower-cased in ASCII; no non-ASCII letter lower-cases into one of these.
func rootScriptExtension(path string) bool {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return false
	}
	switch asciiLower(path[i:]) {
	case ".exe", ".cmd", ".bat", ".ps1", ".sh", ".py":
		return true
	}
	return false
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// shellPlain reports whether s can go into a shell command line unquoted and mean itself. The
// log directory must be like that because ES does not quote it.
func shellPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("/._-+,:@%=", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}
