package es

import (
	"context"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// fake is a fake ES on a real 127.0.0.1 socket with a client for it.
type fake struct {
	srv *fakees.Server
	ln  *fakees.Listener
	c   *Client
}

// newFake serves lib (the captured library when nil) with short,
// real-clock delays so launches complete in milliseconds.
func newFake(t *testing.T, lib *library.Library, cfg Config) *fake {
	t.Helper()
	if lib == nil {
		lib = library.Captured("")
	}
	srv := fakees.New(fakees.Config{Library: lib, Collections: []string{"all", "favorites"},
		LaunchDelay: 20 * time.Millisecond, ReturnDelay: 5 * time.Millisecond})
	ln, err := fakees.Serve("", srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	if cfg.URL == "" {
		cfg.URL = ln.URL()
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 5 * time.Millisecond
	}
	if cfg.LaunchTimeout == 0 {
		cfg.LaunchTimeout = 5 * time.Second
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &fake{srv: srv, ln: ln, c: c}
}

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

const (
	plainID   = "c4bd586365d2edccc03d52f2441bb64c"
	smbID     = "dfc0a340a06b614e45b445627708cb05"
	marioID   = "0c598aff052e6240ed442843b7d22ba9"
	plainPath = "/userdata/roms/nes/Plain.nes"
)

func contextWithTimeout(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	t.Helper()
	return context.WithTimeout(context.Background(), d)
}
