package e2e

import (
	"os"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/outbox"
)

func TestZZDump(t *testing.T) {
	p := os.Getenv("DUMP")
	if p == "" {
		t.Skip()
	}
	s, err := outbox.Open(p, outbox.Options{LockTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Update(func(tx *outbox.Tx) error { t.Logf("%s", tx.TrackerState()); return nil })
	st, _ := s.Stats()
	t.Logf("%+v", st)
}
