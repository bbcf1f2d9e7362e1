// Package prism runs Stoplight Prism (@stoplight/prism-cli, pinned in
// .ci/prism) for tests: as a mock server answering from an OpenAPI
// document's examples, and as a validating proxy in front of a real or
// fake server, so that both sides of a conversation are held to the
// document by a validator we did not write. Test code only.
package prism

import (
	"strings"
	"sync"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/npmpeer"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// PinnedVersion is the prism-cli version .ci/prism/package-lock.json pins.
const PinnedVersion = "5.14.2"

// pinned is prism-cli as .ci/prism pins it; Node 18 is its engines.node.
var pinned = npmpeer.Package{Name: "prism", CIDir: "prism", Bin: "prism", Version: PinnedVersion,
	HomeEnv: "PRISM_HOME", CacheName: "cabinet-prism", MinNode: 18}

var (
	installOnce sync.Once
	installPath string
	installErr  error
)

// Require returns the prism binary, installing the pinned prism-cli with
// `npm ci` on first use (once per machine, under a lock, into $PRISM_HOME,
// else $XDG_CACHE_HOME/cabinet-prism or ~/.cache/cabinet-prism). A missing
// node or npm, or an install that fails, skips t through
// peertest.RequirePeer (a failure under CABINET_REQUIRE_PEERS=1).
func Require(t testing.TB) string {
	t.Helper()
	installOnce.Do(func() { installPath, installErr = pinned.Install() })
	peertest.RequirePeer(t, installErr)
	return installPath
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
