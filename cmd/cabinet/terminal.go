package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// readHidden reads one line from the terminal r with echo off, restoring
// the terminal's mode afterwards.
func readHidden(r io.Reader) (string, error) {
	f, ok := r.(*os.File)
	if !ok {
		return "", errors.New("not a terminal")
	}
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return "", err
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ECHONL
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return "", err
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, old)
	line, err := bufio.NewReader(io.LimitReader(f, 4096)).ReadString('\n')
	if errors.Is(err, io.EOF) && line != "" {
		err = nil
	}
	return strings.TrimRight(line, "\r\n"), err
}

// readVersionJSON runs `BIN version --json` under a deadline.
func readVersionJSON(ctx context.Context, bin string) (versionInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var v versionInfo
	out, err := exec.CommandContext(ctx, bin, "version", "--json").Output()
	if err != nil {
		return v, fmt.Errorf("%s version --json: %w", bin, err)
	}
	if len(out) > 4096 {
		return v, fmt.Errorf("%s version --json: an answer of %d bytes is not a version", bin, len(out))
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return v, fmt.Errorf("%s version --json: %w", bin, err)
	}
	return v, nil
}
