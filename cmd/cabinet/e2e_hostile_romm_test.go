package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// The answers of a broken or hostile RomM that issue 24 found getting through an install, each
// as a class: it adds a ROM to the fake RomM, makes its answers lie, and says what the refusal
// must say and the most RomM may send of its downloads (what the cabinet wrote is no more).

const (
	// hostileBudget is cabinet.library.max_install_bytes in these tests.
	hostileBudget = 64 << 20
	// socketSlack is what loopback's socket buffers may hold beyond what the cabinet read.
	socketSlack = 16 << 20
)

type hostileClass struct {
	name    string
	setup   func(t testing.TB, cab *simulator.Cabinet) (romID int)
	want    string
	maxSent int64
}

func hostileClasses() []hostileClass {
	return []hostileClass{
		{name: "sizes that overflow", setup: overflowingSizes, want: "add up to more than any disk holds"},
		{name: "no size and a download without end", setup: endlessDownload,
			want: "RomM sent more than the 67108864 bytes this download may write", maxSent: hostileBudget + socketSlack},
		{name: "millions of files", setup: manyObjects("files"), want: "has a list of more than 10000 items"},
		{name: "millions of archive members", setup: manyObjects("archive_members"), want: "has a list of more than 10000 items"},
		{name: "a zip directory of long names", setup: longZipDirectory, want: "longer names, than any ROM archive", maxSent: 48<<20 + socketSlack},
		{name: "a file named like ES's game list", setup: gamelistFile, want: "gamelist.xml is the system's game list"},
	}
}

// hostileROM adds a ROM of files to the fake RomM and has its answer replaced by what edit makes
// of the real one (edit returns the body), with its downloads served from content.
func hostileROM(t testing.TB, cab *simulator.Cabinet, spec fakeromm.ROMSpec, edit func(m map[string]any) []byte, content ...fakeromm.HostileContent) int {
	t.Helper()
	rom, err := cab.RomM.AddROM(spec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cab.RomM.ROMJSON(rom.ID)
	if err != nil {
		t.Fatal(err)
	}
	h := fakeromm.Hostile{ROMID: rom.ID, ROM: edit(m), Content: map[int]fakeromm.HostileContent{}}
	for i, f := range rom.Files {
		if i < len(content) {
			h.Content[f.ID] = content[i]
		}
	}
	cab.RomM.SetHostile(h)
	return rom.ID
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fileSpec(name string, n int) fakeromm.FileSpec {
	return fakeromm.FileSpec{Name: name, Data: bytes.Repeat([]byte{0x5a}, n)}
}

// overflowingSizes: four discs of 2^62 bytes each, which add up to 0 in an int64.
func overflowingSizes(t testing.TB, cab *simulator.Cabinet) int {
	spec := fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Name: "Overflow", FSName: "Overflow (USA)", Folder: true}
	for i := 1; i <= 4; i++ {
		spec.Files = append(spec.Files, fileSpec(fmt.Sprintf("Overflow (Disc %d).sfc", i), 1024))
	}
	return hostileROM(t, cab, spec, func(m map[string]any) []byte {
		for _, f := range m["files"].([]any) {
			f.(map[string]any)["file_size_bytes"] = int64(1) << 62
		}
		m["fs_size_bytes"] = 0
		return mustJSON(t, m)
	})
}

// endlessDownload: no size listed anywhere, and a body that never ends.
func endlessDownload(t testing.TB, cab *simulator.Cabinet) int {
	spec := fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Name: "Endless", Files: []fakeromm.FileSpec{fileSpec("Endless (USA).sfc", 1024)}}
	return hostileROM(t, cab, spec, func(m map[string]any) []byte {
		m["fs_size_bytes"] = 0
		for _, f := range m["files"].([]any) {
			f.(map[string]any)["file_size_bytes"] = 0
		}
		return mustJSON(t, m)
	}, fakeromm.HostileContent{Endless: true})
}

// manyObjects: a ROM answer of about 15 MiB, under the client's 16 MiB bound, whose files (or
// its one file's archive members) are millions of empty objects.
func manyObjects(list string) func(t testing.TB, cab *simulator.Cabinet) int {
	return func(t testing.TB, cab *simulator.Cabinet) int {
		spec := fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Name: "Many " + list, Files: []fakeromm.FileSpec{fileSpec("Many (USA).sfc", 1024)}}
		return hostileROM(t, cab, spec, func(m map[string]any) []byte {
			const marker = "\"@LIST@\""
			if list == "files" {
				m["files"] = "@LIST@"
			} else {
				m["files"].([]any)[0].(map[string]any)["archive_members"] = "@LIST@"
			}
			body := mustJSON(t, m)
			n := (15 << 20) / 3
			many := make([]byte, 0, 3*n+1)
			many = append(many, '[')
			for i := 0; i < n; i++ {
				many = append(many, "{},"...)
			}
			many[len(many)-1] = ']'
			return bytes.Replace(body, []byte(marker), many, 1)
		})
	}
}

// longZipDirectory: a correctly listed zip whose entries carry 60 KiB names, extras and
// comments: a central directory of ~27 MiB that Go's reader would hold in memory.
func longZipDirectory(t testing.TB, cab *simulator.Cabinet) int {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i < 150; i++ {
		name := fmt.Sprintf("%04d-", i) + strings.Repeat("n", 60000)
		extra := make([]byte, 4, 60004)
		binary.LittleEndian.PutUint16(extra, 0xcafe)
		binary.LittleEndian.PutUint16(extra[2:], 60000)
		extra = append(extra, bytes.Repeat([]byte{'x'}, 60000)...)
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store, Extra: extra, Comment: strings.Repeat("c", 60000)})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("x"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	spec := fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Name: "Long Names", Files: []fakeromm.FileSpec{fileSpec("Long Names (USA).zip", 1024)}}
	return hostileROM(t, cab, spec, func(m map[string]any) []byte {
		m["fs_size_bytes"] = len(data)
		f := m["files"].([]any)[0].(map[string]any)
		f["file_size_bytes"] = len(data)
		delete(f, "archive_members")
		return mustJSON(t, m)
	}, fakeromm.HostileContent{Data: data, Length: int64(len(data))})
}

// gamelistFile: a correctly hashed file RomM names gamelist.xml.
func gamelistFile(t testing.TB, cab *simulator.Cabinet) int {
	rom, err := cab.RomM.AddROM(fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Name: "Game List",
		Files: []fakeromm.FileSpec{{Name: "gamelist.xml", Data: []byte(`<gameList><game><path>/userdata/system/batocera.conf</path></game></gameList>`)}}})
	if err != nil {
		t.Fatal(err)
	}
	cab.RomM.SetHostile(fakeromm.Hostile{})
	return rom.ID
}

// treeState is every path of the cabinet's tree but the state dir (the store, the logs), with
// its size and time.
func treeState(t testing.TB, cab *simulator.Cabinet) map[string]string {
	t.Helper()
	state := cab.Path("/userdata/system/cabinet")
	out := map[string]string{}
	err := filepath.WalkDir(cab.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == state {
			return filepath.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%v %d %v", fi.Mode(), fi.Size(), fi.ModTime())
		if d.IsDir() {
			out[p] = "dir"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func treeChanges(before, after map[string]string) []string {
	var out []string
	for p, v := range after {
		if before[p] != v {
			out = append(out, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

// hostileCabinet is a simulated cabinet whose installs are held to hostileBudget.
func hostileCabinet(t testing.TB) (*simulator.Cabinet, []string) {
	t.Helper()
	cab, err := simulator.Start(simulator.Options{RomM: true})
	if err != nil {
		t.Fatalf("start the simulator: %v", err)
	}
	t.Cleanup(func() { cab.Close() })
	cab.ES.Start()
	dir, err := os.MkdirTemp("", "cabinet-hostile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	conf, err := cab.WriteConfig(dir, "cabinet.library.allow_install=1", "cabinet.library.max_install_bytes="+strconv.Itoa(hostileBudget))
	if err != nil {
		t.Fatalf("write the simulator's config: %v", err)
	}
	return cab, configEnv(conf)
}

// TestHostileRomMCall: each class, through `cabinet call library_install` (the install runs in
// that process: no daemon), is refused with its reason, RomM sends no more than the class's
// bound, nothing in the cabinet's tree changes, and the process's peak memory stays within
// 64 MiB of a refusal that costs nothing (a non-race binary).
func TestHostileRomMCall(t *testing.T) {
	t.Parallel()
	cab, env := hostileCabinet(t)
	baseline := callPeak(t, env, 999999) // RomM has no such ROM: the cost of the call itself
	for _, c := range hostileClasses() {
		t.Run(c.name, func(t *testing.T) {
			id := c.setup(t, cab)
			before := treeState(t, cab)
			start := time.Now()
			code, out, errOut, peak := callInstall(t, env, id)
			took := time.Since(start)
			if code != 1 || !strings.Contains(out+errOut, c.want) {
				t.Fatalf("exit %d, want 1 with %q:\n%s\n%s", code, c.want, out, lastLines(errOut, 20))
			}
			sent := cab.RomM.HostileSent()
			if sent > c.maxSent {
				t.Errorf("RomM sent %d bytes, want at most %d", sent, c.maxSent)
			}
			if ch := treeChanges(before, treeState(t, cab)); len(ch) > 0 {
				t.Errorf("the refused install changed %q", ch)
			}
			t.Logf("%s: refused in %v, peak RSS %d MiB (%+d MiB over a call that reads nothing), RomM sent %d bytes",
				c.name, took.Round(time.Millisecond), peak>>20, (peak-baseline)>>20, sent)
			if peak-baseline > 64<<20 {
				t.Errorf("peak RSS %d MiB, %d MiB over the baseline %d MiB: want at most 64 MiB more", peak>>20, (peak-baseline)>>20, baseline>>20)
			}
		})
	}
}

// callInstall runs `cabinet call library_install rom_id=id` and returns its exit code, output
// and peak RSS in bytes.
func callInstall(t testing.TB, env []string, id int) (code int, stdout, stderr string, peak int64) {
	t.Helper()
	return runMeasured(t, env, "call", "library_install", "rom_id="+strconv.Itoa(id))
}

func callPeak(t testing.TB, env []string, id int) int64 {
	t.Helper()
	_, _, _, peak := callInstall(t, env, id)
	return peak
}

// TestHostileRomMServe: each class through `cabinet serve`, over MCP on HTTP by a real MCP
// client with no deadline of its own: refused with its reason, RomM sends no more than the
// bound, the tree does not change, and the daemon's peak RSS (VmHWM, reset before each class)
// stays within 64 MiB of its resident size before the call.
func TestHostileRomMServe(t *testing.T) {
	cabinettest.Long(t, "hostile RomM answers through serve (TestHostileRomMCall stays in -short)")
	t.Parallel()
	cab, env := hostileCabinet(t)
	url, token, _, stop, pid := startServeProcess(t, env)
	defer stop()
	c := mcpSession(t, url, token)
	for _, cl := range hostileClasses() {
		t.Run(cl.name, func(t *testing.T) {
			id := cl.setup(t, cab)
			before := treeState(t, cab)
			m := measureRefusal(t, pid, func() (bool, string) {
				return installOverMCP(t, c, id)
			})
			if !m.isError || !strings.Contains(m.text, cl.want) {
				t.Fatalf("library_install: error %v, %q; want an error with %q", m.isError, m.text, cl.want)
			}
			sent := cab.RomM.HostileSent()
			if sent > cl.maxSent {
				t.Errorf("RomM sent %d bytes, want at most %d", sent, cl.maxSent)
			}
			if ch := treeChanges(before, treeState(t, cab)); len(ch) > 0 {
				t.Errorf("the refused install changed %q", ch)
			}
			t.Logf("%s: refused in %v, VmHWM %d MiB (%+d MiB over VmRSS %d MiB before), RomM sent %d bytes",
				cl.name, m.took.Round(time.Millisecond), m.peak>>20, (m.peak-m.before)>>20, m.before>>20, sent)
			if m.peak-m.before > 64<<20 {
				t.Errorf("the daemon's peak RSS rose %d MiB, want at most 64 MiB", (m.peak-m.before)>>20)
			}
		})
	}
}

// refusal is what one refused install cost the daemon.
type refusal struct {
	isError      bool
	text         string
	took         time.Duration
	before, peak int64 // VmRSS before the call, VmHWM after it
}

// measureRefusal resets the daemon's VmHWM (clear_refs 5), runs call and reads the peak.
func measureRefusal(t testing.TB, pid int, call func() (bool, string)) refusal {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Skipf("reset the daemon's peak RSS: %v", err)
	}
	var m refusal
	m.before = procBytes(t, pid, "VmRSS")
	start := time.Now()
	m.isError, m.text = call()
	m.took = time.Since(start)
	m.peak = procBytes(t, pid, "VmHWM")
	return m
}

// procBytes reads a size field (kB) of /proc/pid/status, in bytes.
func procBytes(t testing.TB, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q", field, line)
			}
			return n << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// mcpSession is an initialized MCP session over HTTP with the bearer token.
func mcpSession(t testing.TB, url, token string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// installOverMCP calls library_install with no deadline of the client's (the daemon's own bounds
// are under test); the test's own timeout is the only guard.
func installOverMCP(t testing.TB, c *client.Client, id int) (bool, string) {
	t.Helper()
	res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "library_install", Arguments: map[string]any{"rom_id": id}}})
	if err != nil {
		t.Fatalf("library_install: %v", err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return res.IsError, strings.Join(text, " ")
}

// BenchmarkHostileRomM prints, for each class, what refusing it costs the daemon (`cabinet
// serve`, over MCP on HTTP) and a `cabinet call` process, both the non-race binary: the time of
// the refusal, the peak RSS over the level before it (the daemon's VmHWM is reset per class with
// clear_refs 5; the call's is its own peak over a call that reads nothing), what RomM sent, and
// how long the daemon's RSS takes to come back within 16 MiB of the level before (at most 60 s
// are waited). Run once, outside -race:
//
//	go test -run xxx -bench HostileRomM -benchtime 1x ./cmd/cabinet/
func BenchmarkHostileRomM(b *testing.B) {
	cab, env := hostileCabinet(b)
	url, token, _, stop, pid := startServeProcess(b, env)
	defer stop()
	c := mcpSession(b, url, token)
	// `cabinet call` goes through a running daemon: its own cabinet has none, so it installs
	// in-process.
	callCab, callEnv := hostileCabinet(b)
	baseline := callPeak(b, callEnv, 999999)
	for _, cl := range hostileClasses() {
		b.Run(strings.ReplaceAll(cl.name, " ", "_"), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				id := cl.setup(b, cab)
				m := measureRefusal(b, pid, func() (bool, string) { return installOverMCP(b, c, id) })
				if !m.isError || !strings.Contains(m.text, cl.want) {
					b.Fatalf("library_install: error %v, %q; want an error with %q", m.isError, m.text, cl.want)
				}
				sent := cab.RomM.HostileSent()
				settle := time.Now()
				back := false
				for time.Since(settle) < 60*time.Second {
					if procBytes(b, pid, "VmRSS") <= m.before+16<<20 {
						back = true
						break
					}
					time.Sleep(100 * time.Millisecond) // a reading of the kernel's, not a synchronisation
				}
				settled := time.Since(settle).Round(100 * time.Millisecond).String()
				if !back {
					settled = fmt.Sprintf("not within 60 s (VmRSS %d MiB)", procBytes(b, pid, "VmRSS")>>20)
				}
				id = cl.setup(b, callCab)
				start := time.Now()
				code, out, errOut, peak := callInstall(b, callEnv, id)
				took := time.Since(start)
				if code != 1 || !strings.Contains(out+errOut, cl.want) {
					b.Fatalf("cabinet call: exit %d, want 1 with %q:\n%s\n%s", code, cl.want, out, lastLines(errOut, 20))
				}
				fmt.Printf("%-40s serve: %6v, peak %+4d MiB (VmRSS %d MiB before), RSS back within 16 MiB after %s; call: %6v, peak %+4d MiB (%d MiB); RomM sent %d MiB\n",
					cl.name, m.took.Round(time.Millisecond), (m.peak-m.before)>>20, m.before>>20, settled,
					took.Round(time.Millisecond), (peak-baseline)>>20, peak>>20, sent>>20)
			}
		})
	}
}
