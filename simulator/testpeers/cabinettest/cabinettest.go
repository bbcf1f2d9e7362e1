// Package cabinettest is the rig the end-to-end tests share: the cabinet
// binary built once for every test process of a `go test` run (and kept
// while its sources stay the same), the two brokers every broker-related
// test runs against, an MQTT observer and the retained view Home Assistant
// gets, the independent MCP client (.ci/mcpcheck), and for every test of the
// repository the one way to wait on a condition (Await, with one Deadline)
// and the logger tests give the code (Logger); log buffers, shell-safe
// temporary directories and closed ports.
//
// Test code only: the production binary never links it (the dependency
// test in cmd/cabinet says so).
package cabinettest

import (
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/binarytest"
)

// KeepEnv is the variable that keeps a failed test's temporary directories.
const KeepEnv = "CABINET_E2E_KEEP"

// Build asks Main for one binary: built with Flags, its path stored in Path.
type Build struct {
	Path  *string
	Flags []string
}

// Main is the TestMain of a package whose tests run the binary: it clears
// the CABINET_* overrides (so only each test's config file speaks to the
// processes), builds each binary asked for or takes it from the cache, runs
// the tests and returns the code for os.Exit.
func Main(m *testing.M, builds ...Build) int {
	binarytest.ClearEnv()
	var held []*Binary
	defer func() {
		for _, b := range held {
			b.Close()
		}
	}()
	for _, want := range builds {
		b, err := Compile(want.Flags...)
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
		held = append(held, b)
		*want.Path = b.Path
	}
	ShortParallel()
	return m.Run()
}

// ShortParallel lets more of the parallel tests run at once under -short
// (the inner loop), unless -parallel was given: these tests spend most of
// their time waiting on processes and real deadlines (a delayed flusher, a
// hook's budget), and go test's default, one test per core, leaves both
// cores idle while they wait. The full run (CI, -race) keeps the default.
func ShortParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	if !testing.Short() {
		return
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
}

// ModuleRoot is the repository root (for the tools kept in it).
func ModuleRoot() (string, error) { return binarytest.ModuleRoot() }

// Long skips t under -short: the end-to-end tests that take long run in
// full without it (README's test command and CI), while the inner loop
// keeps a representative few. why says what makes t long.
func Long(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: long e2e, runs without -short", why)
	}
}

// TempDir is a temporary directory whose path has no shell characters
// (subtest names put parentheses into t.TempDir paths, and ES pastes paths
// unquoted into sh command lines). It is removed when t ends, unless t
// failed and CABINET_E2E_KEEP=1.
func TempDir(t testing.TB, what string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cabinet-e2e-"+what+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if os.Getenv(KeepEnv) == "1" && t.Failed() {
			t.Logf("kept %s (%s=1)", dir, KeepEnv)
			return
		}
		os.RemoveAll(dir)
	})
	return dir
}

// ClosedAddr is a loopback host:port (network "tcp" or "udp") where nothing
// listens any more: a peer that is down.
func ClosedAddr(t testing.TB, network string) string {
	t.Helper()
	if network == "udp" {
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.LocalAddr().String()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
