package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/esevents"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestLateReportKeepsSessionID: ES's game-start hook and the configgen
// script report one launch; when the report stamped first reaches the store
// last (its hook found the store busy and its spool file landed after the
// other hook had read the spool), session_start is already out under the
// later report's session id. The session_end must carry the same id, or
// Home Assistant cannot pair them. The test plays the slow spool writer by
// keeping configgen's spool file aside while ES's hook runs.
// (The tracker holds session_start until the launch is final, so it carries
// the id the session keeps.)
func TestLateReportKeepsSessionID(t *testing.T) {
	cabinettest.Long(t, "a session through a stalled spool, about 12 s")
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		b := startBroker(t, kind, cabinettest.BrokerOptions{})
		opts := cabinetOptions{MinSessionSeconds: 1}
		c := newCabinet(t, b, opts)
		c.begin(opts)
		c.fire("start")
		c.waitQuiet()

		unlock := c.lockStore()
		c.configgen(esevents.GameStart, "nes", "libretro", "fceumm", smbPath)
		unlock()
		spooled := c.spoolFiles()
		if len(spooled) != 1 {
			t.Fatalf("spool %v, want configgen's event", spooled)
		}
		aside := filepath.Join(c.root, "aside.event")
		if err := os.Rename(filepath.Join(c.state, "spool", spooled[0]), aside); err != nil {
			t.Fatal(err)
		}
		c.fire("game-start", esevents.GameStartArgs(smbPath, smbName)...)
		starts := c.waitSessionEvents("session_start", 1)
		if err := os.Rename(aside, filepath.Join(c.state, "spool", spooled[0])); err != nil {
			t.Fatal(err)
		}
		play(1500 * time.Millisecond)
		c.fire("game-end")
		c.flushFinal()
		ends := c.waitSessionEvents("session_end", 1)
		if starts[0].SessionID != ends[0].SessionID {
			t.Errorf("session_start id %s, session_end id %s: want one id per session", starts[0].SessionID, ends[0].SessionID)
		}
	})
}
