package batocera

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

func TestExFATTree(t *testing.T) {
	t.Parallel()
	userdata := ExFAT(t)
	tr := NewOn(t, userdata)
	if typ, err := MountType(tr.Path("userdata")); err != nil || typ != "fuseblk" && typ != "fuse" {
		t.Fatalf("userdata is %q (%v), want the exFAT FUSE mount itself", typ, err)
	}
	if _, err := MountType(tr.Path("usr/bin")); err == nil {
		t.Errorf("usr/bin is a mount point; the rest of the tree belongs on the temporary filesystem")
	}

	tr.Services(t, "enable", "foo")
	if v, ok := tr.SettingsGet(t, "system.services"); !ok || v != "foo" {
		t.Errorf("system.services on exFAT = %q, %v; want foo", v, ok)
	}

	// Unix modes do not stick: chmod succeeds, the mode stays 0777.
	p := tr.Path("userdata/system/services/plain")
	tr.Write(t, "userdata/system/services/plain", []byte(service(tr, "plain")), 0o644)
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatalf("chmod on exFAT: %v", err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() == 0o600 {
		t.Errorf("chmod 0600 stuck on exFAT (mode %v): exfat-fuse is expected to ignore it", fi.Mode())
	}
	t.Logf("exFAT: a file created 0644 and chmod 0600 shows %v", fi.Mode())
	if fi.Mode()&0o111 == 0 {
		t.Errorf("mode %v: expected every file to look executable under exfat-fuse's defaults", fi.Mode())
	}
	err = os.Symlink("plain", tr.Path("userdata/system/services/link"))
	if !errors.Is(err, syscall.ENOSYS) {
		t.Errorf("symlink on exFAT: %v, want ENOSYS", err)
	}

	// Every file passes S99's [ -x ] test, so it calls the service directly.
	tr.Services(t, "enable", "plain")
	out := tr.S99(t, "start")
	if !strings.Contains(out, "User Service: plain -> service is enabled [ok]") {
		t.Errorf("S99 start output:\n%s", out)
	}
	cabinettest.Await(t, "the exFAT service to start", nil, func() bool { return tr.calls(t, "plain") == "start\n" })
}
