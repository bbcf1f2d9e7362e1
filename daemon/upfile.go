package daemon

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// writeUpFile tells the wrappers the daemon takes their inbox: its pid and
// its start time as /proc/PID/stat has it (field 22), which a wrapper reads
// back with `read` only. Written by rename, so a wrapper never reads half.
func writeUpFile(path string) error {
	start, err := startTime("/proc/self/stat")
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), ".serve.up.tmp")
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%d %s\n", os.Getpid(), start)), 0o644); err != nil {
		return fmt.Errorf("up file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("up file: %w", err)
	}
	return nil
}

// startTime is field 22 of a /proc/PID/stat file: the process's start, in
// clock ticks since boot, which a reused pid does not share. The fields
// are counted after the command name, which may hold spaces and parens.
func startTime(statFile string) (string, error) {
	b, err := os.ReadFile(statFile)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", statFile, err)
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", fmt.Errorf("%s: no command name", statFile)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (the state): field 22 is f[19].
	if len(f) < 20 {
		return "", fmt.Errorf("%s: %d fields after the name", statFile, len(f))
	}
	return f[19], nil
}
