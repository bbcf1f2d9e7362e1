package config

import (
	"errors"
	"os"
	"testing"
)

func TestEnsureCabinetMAC(t *testing.T) {
	c := &Config{StateDir: t.TempDir()}
	calls := 0
	detect := func(mac string, err error) func() (string, error) {
		return func() (string, error) { calls++; return mac, err }
	}
	if got := c.EnsureCabinetMAC(detect("", errors.New("no default route"))); got != "" {
		t.Fatalf("no route: got %q", got)
	}
	if _, err := os.Stat(c.Layout().MAC()); err == nil {
		t.Fatal("a MAC file was kept without a MAC")
	}
	if got := c.EnsureCabinetMAC(detect("B8:27:EB:12:34:56", nil)); got != "" {
		t.Fatalf("an upper-case MAC from detect was kept: %q", got)
	}
	if got := c.EnsureCabinetMAC(detect("b8:27:eb:12:34:56", nil)); got != "b8:27:eb:12:34:56" {
		t.Fatalf("got %q", got)
	}
	// Chosen once: another interface later does not change it.
	calls = 0
	if got := c.EnsureCabinetMAC(detect("02:00:00:00:00:01", nil)); got != "b8:27:eb:12:34:56" || calls != 0 {
		t.Fatalf("got %q after %d detections, want the kept one and none", got, calls)
	}
	// A state dir that cannot be written: nothing kept, nothing returned.
	ro := &Config{StateDir: "/proc/cabinet-test-cannot-write"}
	if got := ro.EnsureCabinetMAC(detect("b8:27:eb:12:34:56", nil)); got != "" {
		t.Errorf("a MAC that could not be kept was returned: %q", got)
	}
	if err := os.WriteFile(c.Layout().MAC(), []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := c.CabinetMAC(); got != "" {
		t.Fatalf("garbage file read as %q", got)
	}
}
