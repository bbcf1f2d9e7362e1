package romhash

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// Hostile archives, and what refusing them costs: each must be refused with ErrTooLarge, saying
// why, having allocated a few MiB at most (the bound is 64 MiB of peak RSS; Go's readers
// used to take 600 MiB and more). The cases are in zipdir_test.go and tarbounds_test.go.

// centralHeader is one central directory record with fields of the given lengths. The extra field
// is a single well-formed field of a tag no reader knows, so every reader skips it.
func centralHeader(name, extra, comment int) []byte {
	h := make([]byte, 46, 46+name+extra+comment)
	copy(h, "PK\x01\x02")
	binary.LittleEndian.PutUint16(h[4:], 20)
	binary.LittleEndian.PutUint16(h[6:], 20)
	binary.LittleEndian.PutUint16(h[28:], uint16(name))
	binary.LittleEndian.PutUint16(h[30:], uint16(extra))
	binary.LittleEndian.PutUint16(h[32:], uint16(comment))
	h = append(h, bytes.Repeat([]byte("n"), name)...)
	if extra >= 4 {
		h = binary.LittleEndian.AppendUint16(h, 0x6666)
		h = binary.LittleEndian.AppendUint16(h, uint16(extra-4))
		h = append(h, make([]byte, extra-4)...)
	}
	return append(h, bytes.Repeat([]byte("c"), comment)...)
}

// centralDir is n records of centralHeader(name, extra, comment).
func centralDir(n, name, extra, comment int) []byte {
	return bytes.Repeat(centralHeader(name, extra, comment), n)
}

// endRecord is an end-of-central-directory record.
func endRecord(records uint16, dirSize, dirOff uint32) []byte {
	e := make([]byte, 22)
	copy(e, "PK\x05\x06")
	binary.LittleEndian.PutUint16(e[8:], records)
	binary.LittleEndian.PutUint16(e[10:], records)
	binary.LittleEndian.PutUint32(e[12:], dirSize)
	binary.LittleEndian.PutUint32(e[16:], dirOff)
	return e
}

// zip64End is a zip64 end record followed by its locator, for a record written at off.
func zip64End(off int64, records, dirSize, dirOff uint64) []byte {
	r := make([]byte, 56+20)
	copy(r, "PK\x06\x06")
	binary.LittleEndian.PutUint64(r[4:], 44)
	binary.LittleEndian.PutUint64(r[24:], records)
	binary.LittleEndian.PutUint64(r[32:], records)
	binary.LittleEndian.PutUint64(r[40:], dirSize)
	binary.LittleEndian.PutUint64(r[48:], dirOff)
	l := r[56:]
	copy(l, "PK\x06\x07")
	binary.LittleEndian.PutUint64(l[8:], uint64(off))
	binary.LittleEndian.PutUint32(l[16:], 1)
	return r
}

// gnuSparse is an old-GNU sparse header ('S') whose file is all hole: realSize bytes long, no data
// in the archive, so a tiny archive can declare sizes up to 2^63-1.
func gnuSparse(name string, realSize int64) []byte {
	b := make([]byte, 512)
	copy(b, name)
	copy(b[100:], "0000644\x00")
	copy(b[124:], "00000000000\x00") // no data
	copy(b[136:], "00000000000\x00")
	b[156] = 'S'
	copy(b[257:], "ustar  \x00")
	b[483] = 0x80 // base-256
	binary.BigEndian.PutUint64(b[487:], uint64(realSize))
	copy(b[148:], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// repeatTar writes a tar of n copies of one regular file of one byte, with the given name and
// extra PAX records, gzipped when gz is set (a gzip member per copy, which gzip readers read as
// one stream, so the entry is compressed once), and returns its path.
func repeatTar(t *testing.T, path string, gz bool, n int, name string, pax map[string]string) string {
	t.Helper()
	var one bytes.Buffer
	w := tar.NewWriter(&one)
	if err := w.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Size: 1, Mode: 0o644, Format: tar.FormatPAX, PAXRecords: pax}); err != nil {
		t.Fatal(err)
	}
	w.Write([]byte{'x'})
	if err := w.Flush(); err != nil { // the entry's padding, without the archive's end
		t.Fatal(err)
	}
	entry, end := one.Bytes(), make([]byte, 1024)
	if gz {
		entry, end = gzipped(t, entry), gzipped(t, end)
	}
	return writeFile(t, filepath.Dir(path), filepath.Base(path), cat(bytes.Repeat(entry, n), end))
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// measure runs fn and returns the heap bytes it allocated (garbage included), how far the heap's
// resident pages rose above where they were (sampled every 100µs while fn runs: what fn adds to
// the process's RSS, less the runtime's own few pages), and how long it took.
func measure(fn func()) (alloc, peak uint64, took time.Duration) {
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}, // free, but resident until the scavenger returns it
	}
	resident := func() uint64 {
		metrics.Read(samples)
		var n uint64
		for _, s := range samples {
			n += s.Value.Uint64()
		}
		return n
	}
	var before, after runtime.MemStats
	debug.FreeOSMemory()
	runtime.ReadMemStats(&before)
	base := resident()
	done, sampled := make(chan struct{}), make(chan uint64)
	go func() {
		top := uint64(0)
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				sampled <- max(top, resident())
				return
			case <-tick.C:
				top = max(top, resident())
			}
		}
	}()
	start := time.Now()
	fn()
	took = time.Since(start)
	close(done)
	top := <-sampled
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, max(top, base) - base, took
}

// A refusal at a listing's first bad entry allocates a few MiB at most: the tail and directory
// read buffers, Go's reader's own, and for tar one header (a 1 MiB PAX header costs Go's reader
// about three times that before its name can be seen). A listing refused at a total has read up
// to it first; its heap may rise by the bound on RSS, 64 MiB.
const (
	refusalAlloc = 8 << 20
	boundPeak    = 64 << 20
)

type hostile struct {
	name    string
	build   func(t *testing.T, dir string) string // writes the archive, returns its path
	lim     Limits
	listing bool   // ErrListingTooLarge, not only ErrTooLarge
	reason  string // in the message
	atTotal bool   // refused at a total bound: its peak heap is checked, not what it allocated
}

func checkRefusals(t *testing.T, cases []hostile) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.build(t, t.TempDir())
			var err error
			alloc, peak, took := measure(func() { _, err = File(p, tc.lim) })
			t.Logf("refused in %v, %d KiB allocated, heap up %d KiB: %v", took.Round(time.Microsecond), alloc>>10, peak>>10, err)
			if !errors.Is(err, ErrTooLarge) || tc.listing != errors.Is(err, ErrListingTooLarge) {
				t.Fatalf("err = %v, want ErrTooLarge (listing: %v)", err, tc.listing)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("err = %v, want it to say %q", err, tc.reason)
			}
			if !tc.atTotal && alloc > refusalAlloc {
				t.Errorf("the refusal allocated %d KiB, over %d KiB", alloc>>10, refusalAlloc>>10)
			}
			if peak > boundPeak {
				t.Errorf("the refusal raised the heap by %d MiB, over %d MiB", peak>>20, boundPeak>>20)
			}
		})
	}
}

// installer is what install.verify passes for a big archive.
var installer = Limits{MaxFileBytes: 4 << 30, MaxExpandedBytes: 64 << 30, MaxMembers: 20000}
