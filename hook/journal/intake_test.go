package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func open(t *testing.T, path string) *IntakeLog {
	t.Helper()
	l, err := OpenIntake(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func strs(recs [][]byte) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r)
	}
	return out
}

func equal(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func TestIntakeAppendSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intake.log")
	l := open(t, path)
	if got := l.Pending(); len(got) != 0 {
		t.Fatalf("new log pending = %q, want none", strs(got))
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != IntakeCapacity {
		t.Fatalf("new log size = %v (%v), want %d", fi.Size(), err, IntakeCapacity)
	}
	for _, p := range []string{"one", "two", "three"} {
		if err := l.Append([]byte(p)); err != nil {
			t.Fatalf("Append(%s): %v", p, err)
		}
	}
	l.Close() // a crash: nothing marked done

	l2 := open(t, path)
	if got, want := strs(l2.Pending()), []string{"one", "two", "three"}; !equal(got, want) {
		t.Fatalf("pending after reopen = %q, want %q", got, want)
	}
	// New records go after the recovered ones.
	if err := l2.Append([]byte("four")); err != nil {
		t.Fatal(err)
	}
	l2.Close()
	l3 := open(t, path)
	if got, want := strs(l3.Pending()), []string{"one", "two", "three", "four"}; !equal(got, want) {
		t.Fatalf("pending = %q, want %q", got, want)
	}
}

func TestIntakeDoneRetiresRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intake.log")
	l := open(t, path)
	for _, p := range []string{"a-long-first-record", "b", "c"} {
		l.Append([]byte(p))
	}
	if err := l.Done(2); err != nil {
		t.Fatal(err)
	}
	if got, want := strs(l.Pending()), []string{"c"}; !equal(got, want) {
		t.Fatalf("pending after Done(2) = %q, want %q", got, want)
	}
	l.Close()
	// Done(2) alone retires nothing on disk: the file still leads with a
	// and b (applied again at start, which keys make harmless).
	l = open(t, path)
	if got := len(l.Pending()); got != 3 {
		t.Fatalf("pending after reopen = %d, want 3", got)
	}
	if err := l.Done(3); err != nil {
		t.Fatal(err)
	}
	// A shorter record now overwrites the start of the old epoch's first
	// one; what follows must not be read as a record of the new epoch.
	l.Append([]byte("x"))
	l.Close()
	l = open(t, path)
	if got, want := strs(l.Pending()), []string{"x"}; !equal(got, want) {
		t.Fatalf("pending in the new epoch = %q, want %q", got, want)
	}
	if err := l.Done(2); err == nil {
		t.Fatal("Done(2) with one pending: want an error")
	}
}

func TestIntakeTornTailIsDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intake.log")
	l := open(t, path)
	l.Append([]byte("kept"))
	l.Append([]byte("torn-record"))
	l.Close()
	b, _ := os.ReadFile(path)
	second := int64(headerSize + recHeader + len("kept"))
	cases := []struct {
		name string
		hurt func([]byte)
	}{
		{"payload byte flipped", func(b []byte) { b[second+recHeader+3] ^= 0xff }},
		{"length cut", func(b []byte) { b[second] = 3 }},
		{"length huge", func(b []byte) { b[second+2] = 0xff }},
		{"epoch changed", func(b []byte) { b[second+4]++ }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := bytes.Clone(b)
			c.hurt(img)
			p := filepath.Join(t.TempDir(), "intake.log")
			os.WriteFile(p, img, 0o600)
			l := open(t, p)
			if got, want := strs(l.Pending()), []string{"kept"}; !equal(got, want) {
				t.Fatalf("pending = %q, want %q", got, want)
			}
			// The next append replaces the torn record.
			l.Append([]byte("next"))
			l.Close()
			if got, want := strs(open(t, p).Pending()), []string{"kept", "next"}; !equal(got, want) {
				t.Fatalf("pending after append = %q, want %q", got, want)
			}
		})
	}
}

func TestIntakeDamagedHeaderKeepsRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intake.log")
	l := open(t, path)
	l.Append([]byte("acked"))
	l.Close()
	b, _ := os.ReadFile(path)
	b[9] ^= 0x55 // the header's epoch, now failing its checksum
	os.WriteFile(path, b, 0o600)
	l = open(t, path)
	if got, want := strs(l.Pending()), []string{"acked"}; !equal(got, want) {
		t.Fatalf("pending = %q, want %q", got, want)
	}
	l.Close()
	b, _ = os.ReadFile(path)
	if headerEpoch(b) == 0 {
		t.Fatal("the header was not rewritten")
	}
}

func TestIntakeShortOrForeignFile(t *testing.T) {
	for name, content := range map[string][]byte{
		"empty":   nil,
		"garbage": []byte("#!/bin/sh\necho not an intake log\n"),
		"too big": bytes.Repeat([]byte{7}, IntakeCapacity+100),
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "intake.log")
			os.WriteFile(path, content, 0o600)
			l := open(t, path)
			if got := l.Pending(); len(got) != 0 {
				t.Fatalf("pending = %q, want none", strs(got))
			}
			if err := l.Append([]byte("ok")); err != nil {
				t.Fatal(err)
			}
			l.Close()
			if fi, _ := os.Stat(path); fi.Size() != IntakeCapacity {
				t.Fatalf("size = %d, want %d", fi.Size(), IntakeCapacity)
			}
			if got, want := strs(open(t, path).Pending()), []string{"ok"}; !equal(got, want) {
				t.Fatalf("pending = %q, want %q", got, want)
			}
		})
	}
}

func TestIntakeFullAndBounds(t *testing.T) {
	l := open(t, filepath.Join(t.TempDir(), "intake.log"))
	if err := l.Append(nil); err == nil {
		t.Error("empty record accepted")
	}
	if err := l.Append(make([]byte, MaxIntakeRecord+1)); err == nil {
		t.Error("oversized record accepted")
	}
	rec := bytes.Repeat([]byte("e"), MaxIntakeRecord)
	n := 0
	for ; ; n++ {
		err := l.Append(rec)
		if errors.Is(err, ErrIntakeFull) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if want := (IntakeCapacity - headerSize) / (recHeader + MaxIntakeRecord); n != want {
		t.Fatalf("records before full = %d, want %d", n, want)
	}
	if err := l.Done(n); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(rec); err != nil {
		t.Fatalf("append after Done emptied the log: %v", err)
	}
	l.Close()
	if err := l.Append(rec); err == nil {
		t.Fatal("append to a closed log succeeded")
	}
}

func TestIntakeConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intake.log")
	l := open(t, path)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if err := l.Append([]byte(fmt.Sprintf("g%d-%d", g, i))); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	l.Close()
	got := open(t, path).Pending()
	if len(got) != 80 {
		t.Fatalf("pending = %d, want 80", len(got))
	}
	seen := map[string]bool{}
	for _, r := range got {
		seen[string(r)] = true
	}
	if len(seen) != 80 {
		t.Fatalf("distinct records = %d, want 80", len(seen))
	}
}

// FuzzParse: any file image parses without panic, to records that are
// within bounds and that a writer of the same epoch would have written.
func FuzzParseIntake(f *testing.F) {
	dir := f.TempDir()
	l, err := OpenIntake(filepath.Join(dir, "seed"))
	if err != nil {
		f.Fatal(err)
	}
	l.Append([]byte(`{"key":"k","event":{}}`))
	l.Append([]byte("second"))
	l.Close()
	seed, _ := os.ReadFile(filepath.Join(dir, "seed"))
	f.Add(seed[:512])
	f.Add([]byte{})
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		epoch, recs, end := ParseIntake(b)
		if end < headerSize {
			t.Fatalf("end %d before the header", end)
		}
		total := int64(headerSize)
		for _, r := range recs {
			if len(r) == 0 || len(r) > MaxIntakeRecord {
				t.Fatalf("record of %d bytes", len(r))
			}
			total += recHeader + int64(len(r))
		}
		if total != end {
			t.Fatalf("end %d, records cover %d", end, total)
		}
		if len(recs) > 0 && epoch == 0 {
			t.Fatal("records without an epoch")
		}
	})
}

// A log longer than one read chunk comes back whole.
func TestIntakeLongLogReadInChunks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intake.log")
	l := open(t, path)
	var want []string
	for i := 0; i < 500; i++ {
		p := fmt.Sprintf("%03d-%s", i, bytes.Repeat([]byte("x"), 300))
		if err := l.Append([]byte(p)); err != nil {
			t.Fatal(err)
		}
		want = append(want, p)
	}
	l.Close()
	if got := strs(open(t, path).Pending()); !equal(got, want) {
		t.Fatalf("pending: %d records back, want %d", len(got), len(want))
	}
}

func TestIntakeOpenExisting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intake.log")
	l, err := OpenExistingIntake(path)
	if l != nil || err != nil {
		t.Fatalf("OpenExisting(absent) = %v, %v; want nil, nil", l, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("OpenExisting created the file")
	}
	open(t, path).Append([]byte("r"))
	l, err = OpenExistingIntake(path)
	if err != nil || l == nil {
		t.Fatalf("OpenExisting(present) = %v, %v", l, err)
	}
	defer l.Close()
	if got := strs(l.Pending()); !equal(got, []string{"r"}) {
		t.Fatalf("pending = %q", got)
	}
}
