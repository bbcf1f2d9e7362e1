package cabinettest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSourceHash: what the binary is built from changes the key; tests,
// testdata, docs, hidden folders and nested modules do not.
func TestSourceHash(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "go.mod"), "module x\n")
	writeFile(t, filepath.Join(root, "a", "a.go"), "package a\n")
	base, err := sourceHash(root)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		rebuild    bool
	}{
		{"a test", "a/a_test.go", false},
		{"testdata", "a/testdata/in.txt", false},
		{"a document", "a/README.md", false},
		{"a hidden folder", ".ci/run", false},
		{"a nested module", "tool/go.mod", false},
		{"a source", "a/b.go", true},
		{"an embeddable file", "a/page.html", true},
		{"go.sum", "go.sum", true},
	}
	for _, tt := range tests {
		writeFile(t, filepath.Join(root, tt.path), "package a // "+tt.name+"\n")
		got, err := sourceHash(root)
		if err != nil {
			t.Fatal(err)
		}
		if changed := got != base; changed != tt.rebuild {
			t.Errorf("%s (%s): key changed %v, want %v", tt.name, tt.path, changed, tt.rebuild)
		}
		base = got
	}
}

// TestRemoveStale: an entry of other sources goes once no process holds
// it; the entries of the current sources and those in use stay.
func TestRemoveStale(t *testing.T) {
	cache := t.TempDir()
	entry := func(name string) string {
		dir := filepath.Join(cache, name)
		writeFile(t, filepath.Join(dir, "cabinet"), "binary")
		return dir
	}
	current, otherFlags := entry("aaaa-11111111"), entry("aaaa-22222222")
	stale, inUse := entry("bbbb-11111111"), entry("cccc-11111111")
	f, err := os.OpenFile(filepath.Join(inUse, "use.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}

	removeStale(cache, "aaaa-")
	for dir, want := range map[string]bool{current: true, otherFlags: true, stale: false, inUse: true} {
		if _, err := os.Stat(dir); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", filepath.Base(dir), err == nil, want)
		}
	}
}

// TestEventuallyWakes: a wake is taken at once, long before the poll.
func TestEventuallyWakes(t *testing.T) {
	var log LogBuffer
	go func() {
		<-time.After(10 * time.Millisecond) // the writer's own pace, not a synchronisation
		log.Write([]byte("ready\n"))
	}()
	if ok, why := Eventually(5*time.Second, log.Changed, func() (bool, string) {
		return log.Count("ready") == 1, log.String()
	}); !ok {
		t.Fatalf("never saw the line: %q", why)
	}
	if ok, _ := Eventually(30*time.Millisecond, nil, func() (bool, string) { return false, "" }); ok {
		t.Error("a condition that never holds reported true")
	}
}

// TestAwaitForms: both forms of a condition are waited on, and a wake is
// taken at once.
func TestAwaitForms(t *testing.T) {
	var log LogBuffer
	go func() {
		<-time.After(10 * time.Millisecond) // the writer's own pace, not a synchronisation
		log.Write([]byte("one\n"))
		log.Write([]byte("two\n"))
	}()
	Await(t, "line one", log.Changed, func() bool { return log.Count("one") == 1 })
	Await(t, "line two", log.Changed, func() (bool, string) { return log.Count("two") == 1, log.String() })
	if line := log.AwaitLine(t, "line two", "two"); line != "two" {
		t.Errorf("AwaitLine = %q, want two", line)
	}
}

func TestLogBufferLine(t *testing.T) {
	var log LogBuffer
	log.Write([]byte(`{"msg":"one"}` + "\n" + `{"url":"http://x/mcp"`))
	if line, ok := log.Line(`"url"`); ok {
		t.Fatalf("an unfinished line was taken: %q", line)
	}
	log.Write([]byte("}\n"))
	if line, ok := log.Line(`"url"`); !ok || line != `{"url":"http://x/mcp"}` {
		t.Fatalf("line = %q, %v", line, ok)
	}
	if n := log.Count("msg"); n != 1 {
		t.Errorf("count = %d, want 1", n)
	}
}
