package install

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/library/romhash"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Bounds of verification: an archive may expand to this many times its size, at least
// minExpanded and at most maxExpanded, and hold at most maxMembers entries. A zip that expands
// without limit stops there and is not installed.
const (
	expandFactor = 64
	minExpanded  = 1 << 30
	maxExpanded  = 64 << 30
	maxMembers   = 20000
)

// verify checks the downloaded file at part against RomM's hashes of f, computed the way RomM
// computes them (romm-api.md §5.2b): the raw bytes of a plain file, the contents of an archive
// (the composite of its members in name order, and each member against RomM's archive_members).
// The strongest hash both sides have decides: sha1, else md5, else crc32. A file RomM has no hash
// for, or whose format RomM reads and Go cannot (7z, rar), is kept unverified, and the note says
// why. A mismatch, or an archive that expands beyond the bounds, is an error that names the file
// (and both hashes): the caller removes it.
func verify(ctx context.Context, part string, f romm.File, inFolder bool) (ok bool, note string, err error) {
	name := untrusted.Clean(f.Name, 120)
	if f.SHA1 == "" && f.MD5 == "" && f.CRC == "" && len(f.ArchiveMembers) == 0 {
		return false, fmt.Sprintf("RomM has no hash for %s (its platform is not hashed, or hashing is off on the server)", name), nil
	}
	fi, err := os.Stat(part)
	if err != nil {
		return false, "", fmt.Errorf("verify %s: %w", name, err)
	}
	if f.SizeBytes > 0 && fi.Size() != f.SizeBytes {
		return false, "", fmt.Errorf("%s has %d bytes, RomM lists %d: not installed", name, fi.Size(), f.SizeBytes)
	}
	lim := romhash.Limits{MaxFileBytes: fi.Size() + 1, MaxExpandedBytes: min(max(expandFactor*fi.Size(), minExpanded), maxExpanded),
		MaxMembers: maxMembers}
	sums, err := romhash.RomFile(ctx, part, f.Name, inFolder, lim)
	switch {
	case errors.Is(err, romhash.ErrUnsupported):
		return false, fmt.Sprintf("RomM hashes %s by the contents of its archive, which Cabinet cannot read (7z, rar): not verified", name), nil
	case errors.Is(err, romhash.ErrListingTooLarge): // before ErrTooLarge, which it also is
		return false, "", fmt.Errorf("%s lists more members, or longer names, than any ROM archive (a damaged or hostile archive?): not installed; check the file in RomM", name)
	case errors.Is(err, romhash.ErrTooLarge):
		return false, "", fmt.Errorf("%s expands beyond %d GiB when read (an archive that unpacks without end?): not installed", name, lim.MaxExpandedBytes>>30)
	case errors.Is(err, romhash.ErrNoHash):
		return false, "", fmt.Errorf("%s is damaged (its archive cannot be read), but RomM has hashes for it: not installed; try again, and check the file in RomM if it persists", name)
	case err != nil:
		return false, "", fmt.Errorf("verify %s: %w", name, err)
	}
	if err := same(name, "", f.SHA1, f.MD5, f.CRC, sums.SHA1, sums.MD5, sums.CRC); err != nil {
		return false, "", err
	}
	if len(f.ArchiveMembers) > 0 {
		got := map[string]romhash.Member{}
		for _, m := range sums.Members {
			got[m.Name] = m
		}
		for _, want := range f.ArchiveMembers {
			m, ok := got[want.Name]
			if !ok {
				return false, "", fmt.Errorf("%s lacks %s, which RomM lists in it: not installed", name, untrusted.Clean(want.Name, 120))
			}
			if err := same(name, want.Name, want.SHA1, want.MD5, want.CRC, m.SHA1, m.MD5, m.CRC); err != nil {
				return false, "", err
			}
		}
	}
	if f.SHA1 == "" && f.MD5 == "" && f.CRC == "" {
		return true, "", nil // the members matched
	}
	return true, "", nil
}

// same compares the strongest hash both sides have.
func same(file, member, wantSHA1, wantMD5, wantCRC, gotSHA1, gotMD5, gotCRC string) error {
	what := file
	if member != "" {
		what = file + " (" + untrusted.Clean(member, 120) + ")"
	}
	for _, h := range []struct{ kind, want, got string }{{"sha1", wantSHA1, gotSHA1}, {"md5", wantMD5, gotMD5}, {"crc32", wantCRC, gotCRC}} {
		if h.want == "" || h.got == "" {
			continue
		}
		if !strings.EqualFold(h.want, h.got) {
			return fmt.Errorf("%s does not match RomM: %s %s here, %s in RomM; not installed (try again; if it persists, RomM's copy may need a rescan)",
				what, h.kind, h.got, untrusted.Clean(h.want, 64))
		}
		return nil
	}
	if member != "" {
		return nil // RomM's member entry has no hash both sides can compare
	}
	return fmt.Errorf("%s: RomM's hashes (%s) and the file's cannot be compared: not installed", what,
		untrusted.Clean(strings.Join([]string{wantSHA1, wantMD5, wantCRC}, " "), 150))
}

// rawSHA1 is the sha1 and size of the file's bytes, what uninstall compares to tell a change.
func rawSHA1(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha1.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
