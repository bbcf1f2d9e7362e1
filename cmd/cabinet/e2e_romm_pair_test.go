package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestRomMPairEndToEnd runs `cabinet romm pair` (the built binary) against the simulator and a
// fake RomM 5.3.1, approving the code the way a user does in RomM's web UI once the cabinet's
// screen showed it twice; then status, the tools using the paired token (doctor's romm-auth), the
// refusal while cabinet.romm.token is set, unpair, and pairing with a pair code. The token never
// shows in any output.
func TestRomMPairEndToEnd(t *testing.T) {
	cabinettest.Long(t, "the device flow through the binary (daemon/library/pairing tests it in -short)")
	t.Parallel()
	cab, fake, url := rommPairRig(t)
	conf, err := cab.WriteConfig(t.TempDir(), "cabinet.romm.url="+url)
	if err != nil {
		t.Fatal(err)
	}
	env := configEnv(conf)
	secretFree := func(what, out string) {
		t.Helper()
		if strings.Contains(out, "rmm_") {
			t.Errorf("%s shows a RomM token:\n%s", what, out)
		}
	}

	p := startPair(t, env)
	code := waitPending(t, cab, fake)
	if err := fake.Approve(code, nil); err != nil {
		t.Fatal(err)
	}
	exit, stdout, stderr := p.wait(t)
	if exit != 0 {
		t.Fatalf("romm pair: exit %d\n%s%s", exit, stdout, stderr)
	}
	t.Logf("romm pair:\n%s%s", stdout, stderr)
	secretFree("romm pair", stdout+stderr)
	for _, want := range []string{url + "/pair/device?user_code=" + code, "enter the code " + code, "Paired with RomM at " + url + " as device "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("romm pair output lacks %q:\n%s", want, stdout)
		}
	}
	toasts := notifications(cab)
	t.Logf("toasts: %q", toasts)
	wantToast := "Pair with RomM: open " + url + "/pair/device?user_code=" + code + " (code " + code + ")"
	if len(toasts) < 3 || toasts[len(toasts)-1] != "Paired with RomM" {
		t.Fatalf("ES toasts %q: want the code repeated, then %q", toasts, "Paired with RomM")
	}
	for _, got := range toasts[:len(toasts)-1] {
		if got != wantToast {
			t.Errorf("toast %q, want %q", got, wantToast)
		}
	}
	idFile, err := os.ReadFile(cab.Path("/userdata/system/cabinet/id"))
	if err != nil {
		t.Fatal(err)
	}
	devices := fake.Devices()
	if len(devices) != 1 {
		t.Fatalf("RomM has %d devices, want 1: %+v", len(devices), devices)
	}
	d := devices[0]
	if d.ClientDeviceIdentifier != strings.TrimSpace(string(idFile)) || d.Name != "Simulated Cabinet" || d.Platform != "batocera" || d.Client != "cabinet" {
		t.Errorf("RomM's device %+v: want the cabinet id %q, its name, batocera and cabinet", d, idFile)
	}
	fi, err := os.Stat(cab.Path("/userdata/system/cabinet/romm/token"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("paired token file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}

	exit, stdout, stderr = runBinary(t, env, "romm", "status")
	t.Logf("romm status:\n%s%s", stdout, stderr)
	secretFree("romm status", stdout+stderr)
	for _, want := range []string{"romm     5.3.1 at " + url, "device   " + d.ID, "token    paired less than a minute ago", "reads    collections.read, platforms.read, roms.read work"} {
		if !lineStarting(stdout, want) {
			t.Errorf("romm status: no line starting %q in:\n%s", want, stdout)
		}
	}
	if exit != 0 {
		t.Errorf("romm status: exit %d\n%s%s", exit, stdout, stderr)
	}

	// The tools (doctor checks the same client) use the paired token.
	_, stdout, stderr = runBinary(t, env, "doctor", "--verbose")
	secretFree("doctor", stdout+stderr)
	if !lineStarting(stdout, "OK   romm-auth") {
		t.Errorf("doctor with the paired token:\n%s", stdout)
	}

	withToken, err := cab.WriteConfig(t.TempDir(), "cabinet.romm.url="+url, "cabinet.romm.token="+fakeromm.DefaultToken)
	if err != nil {
		t.Fatal(err)
	}
	exit, _, stderr = runBinary(t, configEnv(withToken), "romm", "pair")
	if exit != 1 || !strings.Contains(stderr, "remove cabinet.romm.token (and _file) first: a configured token wins over a paired one") {
		t.Errorf("romm pair with cabinet.romm.token set: exit %d, %s", exit, stderr)
	}

	exit, stdout, stderr = runBinary(t, env, "romm", "unpair")
	t.Logf("romm unpair:\n%s%s", stdout, stderr)
	if exit != 0 || !strings.Contains(stdout, "Forgot the RomM token of device "+d.ID) {
		t.Errorf("romm unpair: exit %d\n%s%s", exit, stdout, stderr)
	}
	exit, stdout, _ = runBinary(t, env, "romm", "status")
	if exit != 1 || !lineStarting(stdout, "token    none: run `cabinet romm pair`") {
		t.Errorf("romm status after unpair: exit %d\n%s", exit, stdout)
	}

	pc := fake.NewPairCode(fakeromm.WriteScopes())
	exit, stdout, stderr = runBinary(t, env, "romm", "pair", "--code", strings.ToLower(pc[:4]+"-"+pc[4:]))
	t.Logf("romm pair --code:\n%s%s", stdout, stderr)
	secretFree("romm pair --code", stdout+stderr)
	if exit != 0 || !strings.Contains(stdout, "Paired with RomM at "+url+" as device ") {
		t.Fatalf("romm pair --code: exit %d\n%s%s", exit, stdout, stderr)
	}
	exit, stdout, _ = runBinary(t, env, "romm", "status")
	if exit != 0 || !strings.Contains(stdout, "device   ") {
		t.Errorf("romm status after pair --code: exit %d\n%s", exit, stdout)
	}
}

// TestRomMPairDeniedEndToEnd: a code refused in RomM ends `cabinet romm pair` with one sentence
// and a last toast saying so; nothing is stored.
func TestRomMPairDeniedEndToEnd(t *testing.T) {
	cabinettest.Long(t, "a second pairing through the binary")
	t.Parallel()
	cab, fake, url := rommPairRig(t)
	conf, err := cab.WriteConfig(t.TempDir(), "cabinet.romm.url="+url)
	if err != nil {
		t.Fatal(err)
	}
	p := startPair(t, configEnv(conf))
	code := waitPending(t, cab, fake)
	if err := fake.Deny(code); err != nil {
		t.Fatal(err)
	}
	exit, stdout, stderr := p.wait(t)
	if exit != 1 || !strings.Contains(stderr, "cabinet romm: the pairing was denied in RomM: run `cabinet romm pair` to try again") {
		t.Errorf("denied: exit %d\n%s%s", exit, stdout, stderr)
	}
	if toasts := notifications(cab); len(toasts) == 0 || toasts[len(toasts)-1] != "RomM pairing denied" {
		t.Errorf("toasts %q, want the last to be %q", toasts, "RomM pairing denied")
	}
	if _, err := os.Stat(cab.Path("/userdata/system/cabinet/romm/token")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a denied pairing stored a token (%v)", err)
	}
}

// rommPairRig is a simulated cabinet and a fake RomM that asks for polls every second.
func rommPairRig(t *testing.T) (*simulator.Cabinet, *fakeromm.Server, string) {
	t.Helper()
	cab, err := simulator.Start(simulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cab.Close() })
	fake, err := fakeromm.New(fakeromm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fake.SetDeviceAuthTiming(time.Second, 2*time.Minute)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return cab, fake, srv.URL
}

type pairProcess struct {
	cmd            *exec.Cmd
	done           chan error
	stdout, stderr *lockedBuffer
}

func startPair(t *testing.T, env []string, args ...string) *pairProcess {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	p := &pairProcess{cmd: exec.CommandContext(ctx, cabinetBinary(t), append([]string{"romm", "pair"}, args...)...),
		done: make(chan error, 1), stdout: &lockedBuffer{}, stderr: &lockedBuffer{}}
	p.cmd.Env, p.cmd.Stdout, p.cmd.Stderr = env, p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
		}
	})
	return p
}

func (p *pairProcess) wait(t *testing.T) (int, string, string) {
	t.Helper()
	select {
	case err := <-p.done:
		var exit *exec.ExitError
		switch {
		case err == nil:
			return 0, p.stdout.String(), p.stderr.String()
		case errors.As(err, &exit):
			return exit.ExitCode(), p.stdout.String(), p.stderr.String()
		}
		t.Fatalf("romm pair: %v", err)
	case <-time.After(cabinettest.Deadline):
		t.Fatalf("romm pair did not end within %v of the answer:\n%s%s", cabinettest.Deadline, p.stdout, p.stderr)
	}
	return 0, "", ""
}

// waitPending waits until RomM has the cabinet's request and the screen showed its code twice (the
// repeat), and returns the user code.
func waitPending(t *testing.T, cab *simulator.Cabinet, fake *fakeromm.Server) string {
	t.Helper()
	var code string
	cabinettest.Await(t, "the code pending in RomM and shown twice on the cabinet", nil, func() (bool, string) {
		codes, toasts := fake.PendingDeviceCodes(), notifications(cab)
		if len(codes) == 1 && len(toasts) >= 2 {
			code = codes[0]
			return true, ""
		}
		return false, fmt.Sprintf("%d pending codes, toasts %q", len(codes), toasts)
	})
	return code
}

// notifications are the texts the cabinet sent to ES's /notify, oldest first.
func notifications(cab *simulator.Cabinet) []string {
	var out []string
	for _, c := range cab.ES.Calls() {
		if c.Route == fakees.RouteNotify {
			out = append(out, c.Body)
		}
	}
	return out
}

// lockedBuffer is a bytes.Buffer a test may read while a process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
