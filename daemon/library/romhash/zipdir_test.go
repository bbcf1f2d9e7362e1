package romhash

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func TestHostileZip(t *testing.T) {
	const wide = 60 << 10 // each of name, extra and comment: 20,000 such entries are 3.7 GB
	wideEntry := int64(46 + 3*wide)
	checkRefusals(t, []hostile{
		{
			name: "20,000 entries of 60 KiB fields, honest end record (3.7 GB, sparse)",
			build: func(t *testing.T, dir string) string {
				p := writeFile(t, dir, "wide.zip", centralDir(8, wide, wide, wide))
				dirSize := 20000 * wideEntry
				f, err := os.OpenFile(p, os.O_RDWR, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if _, err := f.WriteAt(endRecord(20000, uint32(dirSize), 0), dirSize); err != nil {
					t.Fatal(err)
				}
				return p
			},
			lim: installer, listing: true, reason: "zip central directory of 3687320000 bytes, over the 8388608 the cabinet reads",
		},
		{
			name: "entries of 60 KiB fields, end record claiming 46 bytes",
			build: func(t *testing.T, dir string) string {
				d := centralDir(64, wide, wide, wide)
				return writeFile(t, dir, "wide-lie.zip", cat(d, endRecord(1, 46, 0)))
			},
			lim: installer, listing: true, reason: "zip entry name of 61440 bytes, over the 4096 the cabinet reads",
		},
		{
			name: "an extra field of 60 KiB",
			build: func(t *testing.T, dir string) string {
				d := cat(centralHeader(10, 0, 0), centralHeader(10, wide, 0))
				return writeFile(t, dir, "extra.zip", cat(d, endRecord(2, uint32(len(d)), 0)))
			},
			lim: installer, listing: true, reason: "zip entry extra field of 61440 bytes, over the 16384",
		},
		{
			name: "a comment of 60 KiB",
			build: func(t *testing.T, dir string) string {
				d := centralHeader(10, 0, wide)
				return writeFile(t, dir, "comment.zip", cat(d, endRecord(1, uint32(len(d)), 0)))
			},
			lim: installer, listing: true, reason: "zip entry comment of 61440 bytes, over the 4096",
		},
		{
			name: "entries within the per-entry bounds, over 8 MiB in all, honest end record",
			build: func(t *testing.T, dir string) string {
				d := centralDir(341, maxZipName, maxZipExtra, maxZipComment)
				return writeFile(t, dir, "full.zip", cat(d, endRecord(341, uint32(len(d)), 0)))
			},
			lim: installer, listing: true, reason: "zip central directory of 8396102 bytes, over the 8388608",
		},
		{
			name: "the same, end record claiming 46 bytes",
			build: func(t *testing.T, dir string) string {
				d := centralDir(341, maxZipName, maxZipExtra, maxZipComment)
				return writeFile(t, dir, "full-lie.zip", cat(d, endRecord(1, 46, 0)))
			},
			lim: installer, listing: true, reason: "zip central directory of at least 8396102 bytes, over the 8388608",
			atTotal: true,
		},
		{
			name: "a zip64 record declaring 2^40 entries",
			build: func(t *testing.T, dir string) string {
				d := centralHeader(1, 0, 0)
				return writeFile(t, dir, "count.zip", cat(d, zip64End(int64(len(d)), 1<<40, uint64(len(d)), 0), endRecord(0xffff, 0xffffffff, 0xffffffff)))
			},
			lim: installer, listing: true, reason: "zip directory declares 1099511627776 entries, over the 20000",
		},
		{
			// Go's reader takes a 32-bit directory size of 0xffff as the sign of zip64 records.
			name: "a 32-bit size of 0xffff sending Go's reader to a zip64 directory of 25,000 entries",
			build: func(t *testing.T, dir string) string {
				d := centralDir(25000, 1, 0, 0)
				return writeFile(t, dir, "quirk.zip", cat(d, zip64End(int64(len(d)), 3, uint64(len(d)), 0), endRecord(3, 0xffff, 16)))
			},
			lim: installer, listing: true, reason: "zip holds over 20000 entries",
		},
		{
			// The directory's start is implied by the zip64 record's position, not the end
			// record's: 1000 bytes of junk, then the directory.
			name: "a zip64 directory found by its size from the zip64 record",
			build: func(t *testing.T, dir string) string {
				d := cat(make([]byte, 1000), centralDir(25000, 1, 0, 0))
				return writeFile(t, dir, "base.zip", cat(d, zip64End(int64(len(d)), 3, uint64(len(d)-1000), 0), endRecord(0xffff, 0xffffffff, 0xffffffff)))
			},
			lim: installer, listing: true, reason: "zip holds over 20000 entries",
		},
		{
			name: "member sizes whose sum wraps to zero",
			build: func(t *testing.T, dir string) string {
				return writeFile(t, dir, "wrap.zip", wrapZip(t))
			},
			lim: installer, reason: "zip members declare over 68719476736 bytes",
		},
	})
}

// wrapZip holds two stored members that each declare 2^63 bytes.
func wrapZip(t testing.TB) []byte {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, n := range []string{"a", "b"} {
		fw, err := w.CreateRaw(&zip.FileHeader{Name: n, CompressedSize64: 1, UncompressedSize64: 1 << 63})
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte{1})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCostliestListing: the costliest directories the bounds let through, refused afterwards for
// what their members declare, raise the heap by less than the 64 MiB: entries up to the
// byte bound with names of cp437 bytes (each decoded to 3 bytes), and the installer's member limit
// of small ones.
func TestCostliestListing(t *testing.T) {
	names := bytes.Repeat([]byte{0xb0}, maxZipName-256) // '░', 3 bytes of UTF-8 each
	h := centralHeader(len(names), 0, 0)
	copy(h[46:], names)
	binary.LittleEndian.PutUint32(h[24:], 1<<30) // declared size
	big := bytes.Repeat(h, maxZipDir/len(h))
	// The small ones carry an extended timestamp 15 minutes off their MS-DOS time, which costs
	// Go's reader a time zone each.
	small := centralHeader(160, 200-9, 0)
	copy(small[46:46+160], names)
	binary.LittleEndian.PutUint32(small[24:], 1<<30)
	binary.LittleEndian.PutUint16(small[14:], 0x21) // 1980-01-01
	binary.LittleEndian.PutUint16(small[30:], 200)
	ut := []byte{0x55, 0x54, 5, 0, 1, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(ut[5:], uint32(time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC).Unix()-15*60))
	small = cat(small[:46+160], ut, small[46+160:])
	dir := t.TempDir()
	for _, tc := range []struct {
		d []byte
		n int
	}{{big, maxZipDir / len(h)}, {bytes.Repeat(small, 20000), 20000}} {
		d := tc.d
		p := writeFile(t, dir, "costly.zip", cat(d, endRecord(uint16(tc.n), uint32(len(d)), 0)))
		var err error
		alloc, peak, took := measure(func() { _, err = File(p, installer) })
		t.Logf("%d KiB directory refused in %v, %d KiB allocated, heap up %d KiB: %v", len(d)>>10, took.Round(time.Millisecond), alloc>>10, peak>>10, err)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "zip members declare over") {
			t.Fatalf("err = %v, want the members' sizes refused", err)
		}
		if peak > boundPeak {
			t.Errorf("the heap rose by %d MiB, over %d", peak>>20, boundPeak>>20)
		}
	}
}

// Real archives of many members, zip64 and prepended data still hash by their contents.
func TestZipLegitLarge(t *testing.T) {
	dir := t.TempDir()
	var ents []zent
	var want []byte
	for i := 0; i < 5000; i++ {
		n := fmt.Sprintf("Game/DATA/LEVELS/WORLD%02d/STAGE_%05d.DAT", i%64, i)
		e := zent{name: n, data: []byte(n)}
		if i%500 == 0 {
			e.method = zip.Deflate // a few: a deflate writer per member is slow under -race
		}
		ents = append(ents, e)
	}
	raw := makeZip(t, ents...)
	got, err := File(writeFile(t, dir, "many.zip", raw), installer)
	if err != nil || len(got.Members) != 5000 {
		t.Fatalf("%d members, %v", len(got.Members), err)
	}
	for _, m := range got.Members {
		want = append(want, m.Name...)
	}
	checkSums(t, got, want)

	// zip.Writer writes zip64 end records for 65,535 entries or more. Hashed by its largest
	// member (a ".nes.zip"), which reads the whole directory and one member.
	ents = ents[:0]
	for i := 0; i < 0xffff; i++ {
		ents = append(ents, zent{name: fmt.Sprintf("%05d", i)})
	}
	ents[100].data = []byte("the largest")
	raw = makeZip(t, ents...)
	if !bytes.Contains(raw, []byte("PK\x06\x06")) {
		t.Fatal("no zip64 record")
	}
	got, err = File(writeFile(t, dir, "zip64.nes.zip", raw), Limits{MaxMembers: 0xffff})
	if err != nil {
		t.Fatalf("zip64: %v", err)
	}
	checkSums(t, got, []byte("the largest"))

	// A zip64 end record over a small archive, as some writers always write.
	got, err = File(writeFile(t, dir, "small64.zip", asZip64(makeZip(t, zent{name: "b", data: []byte("yy"), method: zip.Deflate}, zent{name: "a", data: []byte("x")}))), Limits{})
	if err != nil || len(got.Members) != 2 {
		t.Fatalf("small zip64: %+v, %v", got, err)
	}
	checkSums(t, got, []byte("xyy"))

	// A self-extractor's stub before the archive: Go finds the directory by its size.
	raw = cat(bytes.Repeat([]byte("MZ stub "), 4096), makeZip(t, zent{name: "a.bin", data: []byte("abc")}))
	got, err = File(writeFile(t, dir, "sfx.zip", raw), Limits{})
	if err != nil || len(got.Members) != 1 {
		t.Fatalf("sfx: %+v, %v", got, err)
	}
	checkSums(t, got, []byte("abc"))
}
