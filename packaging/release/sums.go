package release

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SumsFile is the name of the checksum list beside the release files.
const SumsFile = "SHA256SUMS"

// WriteSums writes dir/SHA256SUMS for the named files of dir, in
// sha256sum's format ("<hex>  <name>", sorted by name), so that
// `sha256sum -c SHA256SUMS` and VerifyChecksum both check them.
func WriteSums(dir string, names []string) error {
	names = slices.Clone(names)
	slices.Sort(names)
	names = slices.Compact(names)
	var b strings.Builder
	for _, n := range names {
		if n != filepath.Base(n) {
			return fmt.Errorf("checksums: %q is not a file name in %s", n, dir)
		}
		sum, err := FileSHA256(filepath.Join(dir, n))
		if err != nil {
			return fmt.Errorf("checksums: %w", err)
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, n)
	}
	if err := os.WriteFile(filepath.Join(dir, SumsFile), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("checksums: %w", err)
	}
	return nil
}
