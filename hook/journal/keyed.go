package journal

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// Keyed is an event with its key: its identity in the store, the same
// whether it arrives over the socket, from the spool or from the intake
// log, so an event that arrives twice (the daemon got it, its ack came too
// late, and the hook spooled it too) is applied once.
type Keyed struct {
	Key   string
	Event tracker.Event
}

// NewKeyed keys an event that has no key yet.
func NewKeyed(ev tracker.Event) Keyed { return Keyed{Key: NewKey(ev), Event: ev} }

// storeKey is the entry that marks the event applied.
func (k Keyed) storeKey() string { return "ev:" + k.Key }

// NewKey names an event for the socket and the spool: boot clock first, so
// keys sort in event order within a boot, then the process and a random
// part.
func NewKey(ev tracker.Event) string {
	var r [4]byte
	rand.Read(r[:])
	return fmt.Sprintf("%020d-%d-%s", int64(ev.Boot), os.Getpid(), hex.EncodeToString(r[:]))
}

// CheckKey refuses a key that cannot name a spool file or a store entry.
func CheckKey(key string) error {
	if key == "" || strings.ContainsAny(key, "/\x00") || len(key) > 128 {
		if len(key) > 40 {
			key = key[:40] + "…"
		}
		return fmt.Errorf("bad event key %q (1 to 128 characters, no slash)", key)
	}
	return nil
}
