package batocera

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// exfatSize is the size of the image ExFAT formats: room for a tree, small
// enough to create in no time (the file is sparse).
const exfatSize = 256 << 20

// mountTimeout bounds each of mkfs, losetup, mount and unmount.
const mountTimeout = 20 * time.Second

// ExFAT mounts a fresh 64 MiB exFAT filesystem for the rest of the test,
// the way Batocera mounts an exFAT /userdata: formatted by mkfs.exfat
// (exfatprogs) and mounted through FUSE by mount.exfat-fuse (exfat-fuse).
// The mount point is a directory named userdata in a fresh temporary
// directory, ready for NewOn. It is unmounted (lazily if busy) when t
// ends.
//
// As root, mount.exfat-fuse asks FUSE for a block device (fuseblk), so the
// image is attached to a loop device first; as another user the image
// file is mounted directly. Missing tools, no /dev/fuse or a refused
// mount or loop device go through peertest.RequirePeer.
//
// What the test in this package observes under exfat-fuse's defaults
// (mounted by root): every file and directory shows mode 0777, owned by
// the mounting user; chmod succeeds and changes nothing; symlinks fail
// with ENOSYS ("function not implemented"); the mount is nosuid,nodev.
// So every file passes S99userservices' [ -x ] test and is called
// directly rather than through bash; one without a #! line still runs,
// as bash runs a file the kernel cannot execute as a script itself.
func ExFAT(t testing.TB) string {
	t.Helper()
	tools, err := exfatTools()
	peertest.RequirePeer(t, err)
	dir := shellSafeTempDir(t, "exfat")
	img := filepath.Join(dir, "share.img")
	f, err := os.Create(img)
	if err == nil {
		err = errors.Join(f.Truncate(exfatSize), f.Close())
	}
	if err != nil {
		t.Fatalf("create the exFAT image: %v", err)
	}
	if _, err := command(tools["mkfs.exfat"], "-L", "SHARE", img); err != nil {
		t.Fatalf("format the exFAT image: %v", err)
	}
	mnt := filepath.Join(dir, "root", "userdata")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	dev := img
	if os.Geteuid() == 0 {
		out, err := command(tools["losetup"], "--find", "--show", img)
		peertest.RequirePeer(t, err)
		dev = strings.TrimSpace(out)
		t.Cleanup(func() {
			if _, err := command(tools["losetup"], "--detach", dev); err != nil {
				t.Logf("detach %s: %v", dev, err)
			}
		})
	}
	if _, err := command(tools["mount.exfat-fuse"], "-o", "noatime", dev, mnt); err != nil {
		peertest.RequirePeer(t, fmt.Errorf("mount exFAT through FUSE: %w", err))
	}
	t.Cleanup(func() { unmount(t, tools, mnt) })
	if fstype, err := MountType(mnt); err != nil || !strings.HasPrefix(fstype, "fuse") {
		t.Fatalf("%s after mount.exfat-fuse: type %q (%v), want a FUSE mount", mnt, fstype, err)
	}
	return mnt
}

// exfatTools finds the programs ExFAT needs, or says which is missing.
func exfatTools() (map[string]string, error) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return nil, fmt.Errorf("no FUSE device (%v): exFAT is mounted through FUSE", err)
	}
	need := []string{"mkfs.exfat", "mount.exfat-fuse"}
	if os.Geteuid() == 0 {
		need = append(need, "losetup")
	}
	tools := map[string]string{}
	for _, name := range need {
		p, err := lookSbin(name)
		if err != nil {
			return nil, fmt.Errorf("%s not found: install exfatprogs, exfat-fuse and util-linux", name)
		}
		tools[name] = p
	}
	for _, name := range []string{"fusermount3", "fusermount"} {
		if p, err := lookSbin(name); err == nil {
			tools["fusermount"] = p
			break
		}
	}
	if tools["fusermount"] == "" && os.Geteuid() != 0 {
		return nil, errors.New("fusermount not found: install fuse3 (or fuse)")
	}
	return tools, nil
}

// lookSbin is exec.LookPath that also looks in the sbin directories, which
// a non-login PATH may lack.
func lookSbin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// unmount takes the FUSE mount at mnt down: fusermount -u, else lazily
// (fusermount -u -z, or umount -l as root) so a process still inside it
// cannot keep the test's directory from going.
func unmount(t testing.TB, tools map[string]string, mnt string) {
	var tries [][]string
	if fm := tools["fusermount"]; fm != "" {
		tries = append(tries, []string{fm, "-u", mnt}, []string{fm, "-u", "-z", mnt})
	}
	if os.Geteuid() == 0 {
		tries = append(tries, []string{"umount", "-l", mnt})
	}
	var errs []error
	for _, try := range tries {
		_, err := command(try[0], try[1:]...)
		if err == nil {
			return
		}
		errs = append(errs, err)
	}
	t.Errorf("unmount the exFAT test filesystem at %s: %v", mnt, errors.Join(errs...))
}

// command runs a short system command and returns its stdout, or an error
// with its output. Output goes through files: mount.exfat-fuse leaves a
// daemon behind, which must not hold a pipe of ours.
func command(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), mountTimeout)
	defer cancel()
	var files [2]*os.File
	for i := range files {
		f, err := os.CreateTemp("", "cabinet-batocera-cmd-")
		if err != nil {
			return "", err
		}
		os.Remove(f.Name())
		defer f.Close()
		files[i] = f
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = files[0], files[1]
	runErr := cmd.Run()
	var out [2][]byte
	for i, f := range files {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return "", err
		}
		b, err := io.ReadAll(f)
		if err != nil {
			return "", err
		}
		out[i] = b
	}
	if runErr != nil {
		return "", fmt.Errorf("%s %s: %v: %s%s", filepath.Base(name), strings.Join(args, " "), runErr, out[1], out[0])
	}
	return string(out[0]), nil
}

// MountType is the filesystem type of the mount at exactly dir (from
// /proc/self/mountinfo), or an error when dir is no mount point.
func MountType(dir string) (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	typ := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - type source super
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, s := range fields {
			if s == "-" {
				sep = i
				break
			}
		}
		if len(fields) > 4 && sep > 0 && sep+1 < len(fields) && unescapeMount(fields[4]) == dir {
			typ = fields[sep+1] // a later mount on the same point hides earlier ones
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if typ == "" {
		return "", fmt.Errorf("%s is not a mount point", dir)
	}
	return typ, nil
}

// unescapeMount undoes mountinfo's octal escapes of space, tab, newline and
// backslash.
func unescapeMount(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}
