package doctor

import (
	"fmt"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/library/install/stage"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// checkInstalls reports what unfinished library installs left in the ROM
// folders (hidden from ES; cabinet serve removes them when it starts).
func checkInstalls(romsRoot string) Result {
	if romsRoot == "" {
		return Result{Status: Skip, Detail: "no ROM folder to look in"}
	}
	left, err := stage.Leftovers(romsRoot)
	if err != nil {
		return Result{Status: Warn, Detail: "the ROM folders could not be read for unfinished installs: " + untrusted.Clean(err.Error(), 200)}
	}
	if len(left) == 0 {
		return Result{Status: OK, Detail: "no unfinished library install"}
	}
	var bytes int64
	var facts, dirs []string
	for _, l := range left {
		bytes += l.Bytes
		facts = append(facts, fmt.Sprintf("%s: %d KiB, left %s", l.Dir, (l.Bytes+1023)/1024, l.ModTime.Format("2006-01-02 15:04")))
		dirs = append(dirs, "'"+l.Dir+"'")
	}
	return Result{Status: Warn, Detail: fmt.Sprintf("%d unfinished library install(s) left %d MiB in the ROM folders (ES does not list them)", len(left), bytes>>20),
		Hint: "cabinet serve removes them when it starts; to remove them now: rm -r " + strings.Join(dirs, " "), Facts: facts}
}
