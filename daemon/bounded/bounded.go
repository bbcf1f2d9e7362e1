// Package bounded reads files Cabinet does not write alone (configuration,
// certificates, caches, pairing records) with a size bound, so a huge or
// endless file costs at most the bound and gets an error saying so.
//
// It also bounds the shape of JSON from servers (CheckJSON): a body within its
// size bound can still hold millions of empty values, and a decoder allocates
// for every one of them before its caller can count them.
package bounded

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrTooLarge is wrapped by ReadFile's error for a file over its bound and by
// CheckJSON's for a document over one of its limits.
var ErrTooLarge = errors.New("file too large")

// ReadFile reads path, refusing more than max bytes.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: %w: larger than %s", path, ErrTooLarge, Size(max))
	}
	return b, nil
}

// Size says a bound the way people read it: "1 MiB", "64 KiB", "100 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
