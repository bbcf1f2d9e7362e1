package realretroarch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// waitVersion sends VERSION until RetroArch answers. RetroArch opens its
// command socket only after the core and content are loaded, and it answers
// only from its main loop, so until then the probe sees refusals or silence.
func (in *Instance) waitVersion(ctx context.Context) error {
	conn, err := net.Dial("udp", in.Addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	buf := make([]byte, 64*1024)
	for {
		select {
		case <-in.done:
			return errExited
		case <-ctx.Done():
			return fmt.Errorf("no VERSION reply on %s: %w", in.Addr, ctx.Err())
		default:
		}
		// A write can report the refusal of an earlier probe; either way, retry.
		if _, err := conn.Write([]byte("VERSION")); err == nil {
			_ = conn.SetReadDeadline(time.Now().Add(probeInterval))
			n, err := conn.Read(buf)
			if err == nil && n > 0 && buf[0] >= '0' && buf[0] <= '9' {
				return nil
			}
			if err == nil || errors.Is(err, syscall.ECONNREFUSED) {
				// Refusal comes back at once; pace the retries.
				pause(ctx, in.done, probeInterval)
			}
			continue
		}
		pause(ctx, in.done, probeInterval)
	}
}

func pause(ctx context.Context, done <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-done:
	}
}

// Done is closed when the RetroArch process has exited (after QUIT or Stop).
func (in *Instance) Done() <-chan struct{} { return in.done }

// Stop ends RetroArch and waits for the whole process group to exit. It sends
// SIGTERM to retroarch itself, so dbus-run-session sees its child exit, stops
// its dbus-daemon and reaps both (killing the leader first would orphan them
// as zombies); after a grace period it SIGKILLs the group. Safe to call more
// than once, and after QUIT. RetroArch ends its content on SIGTERM as on
// QUIT, so it writes the battery save (SRMPath) then too.
func (in *Instance) Stop() error {
	in.stopOnce.Do(func() {
		if in.cmd == nil || in.cmd.Process == nil {
			return
		}
		select {
		case <-in.done: // exited (QUIT): its group id may be another's by now
			return
		default:
		}
		leader := in.cmd.Process.Pid
		children := childPIDs(leader)
		if len(children) == 0 {
			_ = syscall.Kill(-leader, syscall.SIGTERM)
		}
		for _, pid := range children {
			if commName(pid) == "retroarch" {
				_ = syscall.Kill(pid, syscall.SIGTERM)
			}
		}
		select {
		case <-in.done:
		case <-time.After(stopGrace):
			_ = syscall.Kill(-leader, syscall.SIGKILL)
			<-in.done
		}
	})
	return nil
}

// childPIDs lists the direct children of pid from /proc.
func childPIDs(pid int) []int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

func commName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// LogTail returns the end of RetroArch's verbose log, for failure messages.
func (in *Instance) LogTail() string {
	b, err := os.ReadFile(in.LogPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	if len(b) > logTailBytes {
		b = b[len(b)-logTailBytes:]
	}
	return strings.TrimSpace(string(b))
}

// spokePrefix starts the log line of each message the narrator spoke
// (accessibility_speak_priority: RARCH_LOG("Spoke: %s\n", …)).
const spokePrefix = "[INFO] Spoke: "

// Spoken are the on-screen messages RetroArch has shown so far, oldest
// first, as its narrator logged them (Options.Narrate): SHOW_MSG's text and
// RetroArch's own ("100%: Saved state to slot #4.").
func (in *Instance) Spoken() []string {
	b, err := os.ReadFile(in.LogPath)
	if err != nil {
		return nil
	}
	var out []string
	// Whole lines only: RetroArch may be writing the last one.
	for _, l := range strings.Split(string(b[:bytes.LastIndexByte(b, '\n')+1]), "\n") {
		if msg, ok := strings.CutPrefix(l, spokePrefix); ok {
			out = append(out, msg)
		}
	}
	return out
}

// FreeUDPPort returns a UDP port that was free on 127.0.0.1 a moment ago.
// RetroArch binds 0.0.0.0, so the port is checked there too.
func FreeUDPPort() (int, error) {
	for range 20 {
		c, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("free udp port: %w", err)
		}
		port := c.LocalAddr().(*net.UDPAddr).Port
		c.Close()
		if all, err := net.ListenPacket("udp4", fmt.Sprintf("0.0.0.0:%d", port)); err == nil {
			all.Close()
			return port, nil
		}
	}
	return 0, errors.New("free udp port: none found")
}

// replyWait is how long Command waits for an answer before it sends its
// command again: RetroArch answers from its main loop, within a frame or
// two, and a datagram can be lost.
const replyWait = 500 * time.Millisecond

// Command sends a query command (VERSION, GET_STATUS, READ_CORE_RAM …) to
// RetroArch's command port and returns its first reply, sending it again
// each time no reply comes within half a second, until ctx ends or
// RetroArch exits. Only for commands that are safe to repeat.
func (in *Instance) Command(ctx context.Context, cmd string) (string, error) {
	conn, err := net.Dial("udp", in.Addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Now()) })
	defer stop()
	buf := make([]byte, 64*1024)
	for {
		select {
		case <-in.done:
			return "", fmt.Errorf("%s: retroarch exited", cmd)
		default:
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("%s: no reply from %s: %w", cmd, in.Addr, ctx.Err())
		}
		if _, err := conn.Write([]byte(cmd)); err != nil {
			pause(ctx, in.done, probeInterval)
			continue
		}
		_ = conn.SetReadDeadline(time.Now().Add(replyWait))
		if ctx.Err() != nil { // AfterFunc may have run before this deadline replaced its own
			continue
		}
		n, err := conn.Read(buf)
		if err == nil {
			return string(buf[:n]), nil
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			// Not listening (yet, or any more): refusal comes back at once.
			pause(ctx, in.done, probeInterval)
		}
	}
}

// ReadCoreRAM asks RetroArch for n bytes of the core's memory at addr
// (`READ_CORE_RAM <addr hex> <n>`) and returns them. 1.14 reads through
// its achievements memory map, which for Nestopia puts the 2 KiB of system
// RAM at $0000 and the cartridge's battery RAM, if any, after it
// (SRAMCoreRAMAddr); elsewhere, and until the core's memory is registered
// after the first frames, RetroArch answers -1, an error here.
func (in *Instance) ReadCoreRAM(ctx context.Context, addr uint32, n int) ([]byte, error) {
	cmd := fmt.Sprintf("READ_CORE_RAM %x %d", addr, n)
	reply, err := in.Command(ctx, cmd)
	if err != nil {
		return nil, err
	}
	f := strings.Fields(reply)
	if len(f) < 3 || f[0] != "READ_CORE_RAM" || f[1] != fmt.Sprintf("%x", addr) {
		return nil, fmt.Errorf("%s: unexpected reply %q", cmd, reply)
	}
	if f[2] == "-1" {
		return nil, fmt.Errorf("%s: RetroArch answered -1 (address not mapped, or no core memory yet)", cmd)
	}
	if len(f)-2 != n {
		return nil, fmt.Errorf("%s: %d bytes in reply %q", cmd, len(f)-2, reply)
	}
	out := make([]byte, n)
	for i, h := range f[2:] {
		b, err := strconv.ParseUint(h, 16, 8)
		if err != nil {
			return nil, fmt.Errorf("%s: reply %q: %w", cmd, reply, err)
		}
		out[i] = byte(b)
	}
	return out, nil
}

// Quit sends QUIT and waits until RetroArch has exited, sending it again
// while RetroArch still runs; on the way out RetroArch unloads the content
// and so writes its battery save (SRMPath). quit_press_twice is off, so one
// QUIT is enough. When ctx ends first, Quit returns its error and the caller
// still owes Stop.
func (in *Instance) Quit(ctx context.Context) error {
	conn, err := net.Dial("udp", in.Addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	for {
		_, _ = conn.Write([]byte("QUIT"))
		t := time.NewTimer(replyWait)
		select {
		case <-in.done:
			t.Stop()
			return nil
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("QUIT: retroarch still running: %w", ctx.Err())
		case <-t.C:
		}
	}
}
