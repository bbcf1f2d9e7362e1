package install

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// holdLockEnv makes the test binary a child that holds the install lock
// (TestHoldInstallLock) until its stdin closes.
const holdLockEnv = "CABINET_TEST_HOLD_INSTALL_LOCK"

// TestHoldInstallLock is the child of TestWritingOtherProcess; run
// directly, it does nothing.
func TestHoldInstallLock(t *testing.T) {
	p := os.Getenv(holdLockEnv)
	if p == "" {
		t.Skip("the child of TestWritingOtherProcess")
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("locked\n")
	bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
}

func writing(t *testing.T, p string) bool {
	t.Helper()
	w, err := Writing(p)
	if err != nil {
		t.Fatalf("Writing(%s): %v", p, err)
	}
	return w
}

func TestWritingOtherProcess(t *testing.T) {
	p := filepath.Join(t.TempDir(), "install.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHoldInstallLock$")
	cmd.Env = append(os.Environ(), holdLockEnv+"="+p)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	if l, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || l != "locked\n" {
		t.Fatalf("the child said %q, %v; want locked", l, err)
	}
	if !writing(t, p) {
		t.Error("Writing = false while another process holds the lock")
	}
	if !writing(t, p) {
		t.Error("Writing = false on the second probe: the first one took the lock")
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the child: %v", err)
	}
	if writing(t, p) {
		t.Error("Writing = true after the other process exited")
	}
}

func TestWritingSeparateOpen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "install.lock")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if writing(t, p) {
		t.Error("Writing = true for a free lock file")
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if !writing(t, p) {
		t.Error("Writing = false while another open file of this process holds the lock")
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if writing(t, p) {
		t.Error("Writing = true after the lock was released")
	}
	// The probe released its own lock: the file can be locked again.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Errorf("the lock cannot be taken after the probe: %v", err)
	}
}

func TestWritingInstallersLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state", "install.lock")
	in := &Installer{LockFile: p}
	if writing(t, p) {
		t.Error("Writing = true before any install (no lock file yet)")
	}
	unlock, err := in.lock()
	if err != nil {
		t.Fatal(err)
	}
	if !writing(t, p) {
		t.Error("Writing = false while the Installer holds its lock")
	}
	unlock()
	if writing(t, p) {
		t.Error("Writing = true after the install ended")
	}
	// The probe does not leave the lock held: the next install takes it.
	unlock, err = in.lock()
	if err != nil {
		t.Fatalf("the next install: %v", err)
	}
	unlock()
}

func TestWritingMissingFile(t *testing.T) {
	w, err := Writing(filepath.Join(t.TempDir(), "nope", "install.lock"))
	if w || err != nil {
		t.Errorf("Writing(missing) = %v, %v; want false, nil", w, err)
	}
}
