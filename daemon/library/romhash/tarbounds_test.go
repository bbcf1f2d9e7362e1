package romhash

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func TestHostileTar(t *testing.T) {
	long := strings.Repeat("n", 1<<20-100)
	checkRefusals(t, []hostile{
		{
			name: "one PAX name of 1 MiB",
			build: func(t *testing.T, dir string) string {
				return repeatTar(t, filepath.Join(dir, "one.tar"), false, 1, long, nil)
			},
			lim: installer, listing: true, reason: "tar entry name of 1048476 bytes, over the 4096 the cabinet reads",
		},
		{
			name: "gzipped PAX names of 1 MiB, many",
			build: func(t *testing.T, dir string) string {
				return repeatTar(t, filepath.Join(dir, "many.tar.gz"), true, 64, long, nil)
			},
			lim: installer, listing: true, reason: "tar entry name of 1048476 bytes",
		},
		{
			name: "names of 4000 bytes, over 8 MiB in all",
			build: func(t *testing.T, dir string) string {
				return repeatTar(t, filepath.Join(dir, "names.tar.gz"), true, 2100, long[:4000], nil)
			},
			lim: installer, listing: true, reason: "tar member names of at least 8392000 bytes in all, over the 8388608",
			atTotal: true,
		},
		{
			// The costliest: every name in a PAX header of its own, which Go's reader parses
			// into garbage of about 2 KiB, as many as the member limit allows.
			name: "20,000 names of 420 bytes, over 8 MiB in all",
			build: func(t *testing.T, dir string) string {
				return repeatTar(t, filepath.Join(dir, "names.tar"), false, 20000, long[:420], nil)
			},
			lim: installer, listing: true, reason: "tar member names of at least 8388660 bytes in all, over the 8388608",
			atTotal: true,
		},
		{
			// Short names in PAX headers padded to 1 MiB: Go's reader turns each into 3 MiB
			// of garbage, which used to add 60 MiB of RSS over a 1 GiB expansion.
			name: "PAX headers of 1 MiB, many",
			build: func(t *testing.T, dir string) string {
				return repeatTar(t, filepath.Join(dir, "padded.tar.gz"), true, 64, "gé", map[string]string{"comment": strings.Repeat("p", 1<<20-200)})
			},
			lim: installer, listing: true, reason: "tar headers of at least 34596", atTotal: true,
		},
		{
			name: "sparse members whose sizes wrap",
			build: func(t *testing.T, dir string) string {
				var b []byte
				for _, n := range []string{"a", "b", "c", "d"} {
					b = append(b, gnuSparse(n, 1<<62)...)
				}
				return writeFile(t, dir, "wrap.tar", append(b, make([]byte, 1024)...))
			},
			lim: installer, reason: "tar members declare over 68719476736 bytes",
		},
	})
}

// TestTarNamesHoldNoHeaders: a PAX path is a substring of its whole header, up to 1 MiB; the
// listing keeps a copy of the name, not the header.
func TestTarNamesHoldNoHeaders(t *testing.T) {
	const n = 24 // 24 MiB of headers, under maxTarHeaders
	// "é" is not ASCII, so the name is written as a PAX path.
	p := repeatTar(t, filepath.Join(t.TempDir(), "padded.tar.gz"), true, n, "gé", map[string]string{"comment": strings.Repeat("p", 1<<20-200)})
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := newHasher(t.Context(), Limits{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	entries, ok, err := h.listTar(f, tarGzip)
	if err != nil || !ok || len(entries) != n {
		t.Fatalf("%d entries, %v, %v", len(entries), ok, err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(entries)
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > 1<<20 {
		t.Errorf("the listing of %d short names holds %d KiB", n, held>>10)
	}
}

// TestTarReverseOrder: the members of a plain tar are read where they are, in name order, whatever
// order the tar has them in: 5,000 members in reverse order hash as RomM does (the composite of
// the sorted members) without a pass over the headers for each. A member the file does not hold
// whole is still read through the tar reader, and its damage sends the hash to the raw bytes as
// before.
func TestTarReverseOrder(t *testing.T) {
	const n = 5000
	var ents []tent
	var sorted []Member
	var all [][]byte
	for i := n - 1; i >= 0; i-- {
		ents = append(ents, tent{name: fmt.Sprintf("m%05d.bin", i), data: []byte(fmt.Sprintf("member %d", i))})
	}
	for i := 0; i < n; i++ {
		d := []byte(fmt.Sprintf("member %d", i))
		sorted = append(sorted, wantMember(fmt.Sprintf("m%05d.bin", i), d))
		all = append(all, d)
	}
	raw := makeTar(t, ents...)
	got, err := File(writeFile(t, t.TempDir(), "g.tar", raw), Limits{MaxMembers: 20000})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Members, sorted) {
		t.Fatalf("%d members, want the %d sorted ones", len(got.Members), n)
	}
	checkSums(t, got, cat(all...))

	// Cut inside the last member's data: tarfile reads the listing (the header is whole) and
	// fails on the member: the raw bytes, as RomM hashes them.
	two := makeTar(t, tent{name: "b.bin", data: bytes.Repeat([]byte("b"), 2048)}, tent{name: "a.bin", data: bytes.Repeat([]byte("a"), 2048)})
	cut := two[:512+2048+512+1000]
	got, err = File(writeFile(t, t.TempDir(), "cut.tar", cut), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Members) != 0 {
		t.Errorf("a tar cut inside a member hashed by members: %+v", got.Members)
	}
	checkSums(t, got, cut)
}
