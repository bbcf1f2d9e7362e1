package deploy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// readSecrets reads the value of each --save-secret key before anything
// connects: on a terminal from a prompt that does not echo, else one line
// per key, in order, from stdin. The values only ever travel over the
// remote install's standard input.
func readSecrets(ctx context.Context, o Options) ([]string, error) {
	if len(o.SecretKeys) == 0 {
		return nil, nil
	}
	if o.IsTerminal {
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("open the terminal to ask for %s: %w (or give the secrets one per line on standard input)", o.SecretKeys[0], err)
		}
		defer tty.Close()
		ctx, cancel := context.WithTimeout(ctx, interactiveTimeout)
		defer cancel()
		in := bufio.NewReader(tty)
		values := make([]string, 0, len(o.SecretKeys))
		for _, k := range o.SecretKeys {
			v, err := promptSecret(ctx, tty, in, k)
			if err != nil {
				return nil, err
			}
			values = append(values, v)
		}
		return values, nil
	}
	return secretLines(o.Stdin, o.SecretKeys)
}

// secretLines reads one value per key from r.
func secretLines(r io.Reader, keys []string) ([]string, error) {
	if r == nil {
		r = strings.NewReader("")
	}
	in := bufio.NewReader(r)
	values := make([]string, 0, len(keys))
	for i, k := range keys {
		line, err := in.ReadString('\n')
		if err != nil && !(errors.Is(err, io.EOF) && line != "") {
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("read the value of %s from standard input: it ended after %d of %d secrets; give one per line, in the order of --save-secret", k, i, len(keys))
			}
			return nil, fmt.Errorf("read the value of %s from standard input: %w", k, err)
		}
		values = append(values, strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"))
	}
	return values, nil
}

// promptSecret asks for key's value on the terminal with echo off, and
// puts the terminal back as it was, also when ctx ends first (Ctrl-C).
func promptSecret(ctx context.Context, tty *os.File, in *bufio.Reader, key string) (string, error) {
	fd := int(tty.Fd())
	saved, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return "", fmt.Errorf("read the terminal's settings to ask for %s: %w", key, err)
	}
	quiet := *saved
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	quiet.Iflag |= unix.ICRNL
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return "", fmt.Errorf("turn off the terminal's echo to ask for %s: %w", key, err)
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, saved)
	fmt.Fprintf(tty, "%s (not shown): ", key)
	type result struct {
		line string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		line, err := in.ReadString('\n')
		got <- result{line, err}
	}()
	select {
	case r := <-got:
		fmt.Fprintln(tty)
		if r.err != nil && !(errors.Is(r.err, io.EOF) && r.line != "") {
			return "", fmt.Errorf("read %s from the terminal: %w", key, r.err)
		}
		return strings.TrimSuffix(strings.TrimSuffix(r.line, "\n"), "\r"), nil
	case <-ctx.Done():
		fmt.Fprintln(tty)
		return "", fmt.Errorf("asking for %s: %w", key, ctx.Err())
	}
}

// IsTerminal says whether r is a terminal (then deploy and ssh may ask
// questions there).
func IsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
