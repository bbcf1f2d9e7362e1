package journal

// The inbox is the tmpfs folder where, while the daemon runs, the ES and
// configgen wrappers leave their events without starting the binary. A
// wrapper that finds the daemon up (its pid and start time in the up file
// match /proc) writes one record with one printf and exits: a shell's cost,
// not a Go program's start. The daemon reads each file when it is closed,
// appends the event to its fsynced intake log and removes the file;
// whoever owns the store next takes what a crashed daemon left.
//
// A record is what the wrapper's printf writes: NUL-terminated fields (sh
// variables cannot hold NUL, so any argv survives byte for byte)
//
//	cabinet-inbox-1 \0 UPTIME \0 N \0 ARG1 \0 … ARGN \0 end \0
//
// where UPTIME is the first field of /proc/uptime (CLOCK_BOOTTIME, 10 ms
// resolution), and ARG1…ARGN the argv `cabinet hook` would have received.
// A record that lacks its end (a full tmpfs cut the printf short) is torn:
// the wrapper then fell back to the binary, so the record is never applied.

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// InboxMagic opens every record; InboxEnd closes it.
const (
	InboxMagic = "cabinet-inbox-1"
	InboxEnd   = "end"
)

// Bounds on a record: ES passes at most three arguments, configgen five,
// and argv.Parse bounds each one.
const (
	MaxInboxRecord = 64 << 10
	maxArgs        = 16
)

// ErrInboxTorn means the record was cut short: its writer failed and fell back
// to the binary.
var ErrInboxTorn = errors.New("inbox record cut short")

// InboxRecord is one event as a wrapper wrote it.
type InboxRecord struct {
	// Uptime is /proc/uptime when the wrapper ran: the boot clock.
	Uptime time.Duration
	// Argv is what `cabinet hook` would have received.
	Argv []string
}

// EncodeInbox renders r as a wrapper's printf writes it.
func EncodeInbox(r InboxRecord) []byte {
	fields := append([]string{InboxMagic, formatUptime(r.Uptime), strconv.Itoa(len(r.Argv))}, r.Argv...)
	var b bytes.Buffer
	for _, f := range append(fields, InboxEnd) {
		b.WriteString(f)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// ParseInbox reads one record, refusing anything that is not exactly one.
func ParseInbox(b []byte) (InboxRecord, error) {
	if len(b) > MaxInboxRecord {
		return InboxRecord{}, fmt.Errorf("inbox record of %d bytes: at most %d", len(b), MaxInboxRecord)
	}
	if !bytes.HasPrefix(b, []byte(InboxMagic+"\x00")) {
		return InboxRecord{}, errors.New("not an inbox record")
	}
	if len(b) == 0 || b[len(b)-1] != 0 {
		return InboxRecord{}, ErrInboxTorn
	}
	fields := strings.Split(string(b[:len(b)-1]), "\x00")
	if len(fields) < 4 || fields[len(fields)-1] != InboxEnd {
		return InboxRecord{}, ErrInboxTorn
	}
	up, err := parseUptime(fields[1])
	if err != nil {
		return InboxRecord{}, err
	}
	n, err := strconv.Atoi(fields[2])
	if err != nil || n < 1 || n > maxArgs {
		return InboxRecord{}, fmt.Errorf("inbox record: argument count %q (1 to %d)", clip(fields[2]), maxArgs)
	}
	argv := fields[3 : len(fields)-1]
	if len(argv) != n {
		// An argument that holds "end" cannot end a record early: the count
		// says where the arguments stop.
		return InboxRecord{}, fmt.Errorf("inbox record: %d arguments, the count says %d", len(argv), n)
	}
	return InboxRecord{Uptime: up, Argv: argv}, nil
}

// parseUptime reads /proc/uptime's first field: seconds with (up to)
// hundredths, "12345.67".
func parseUptime(s string) (time.Duration, error) {
	whole, frac, _ := strings.Cut(s, ".")
	bad := fmt.Errorf("inbox record: uptime %q is not seconds.hundredths", clip(s))
	if whole == "" || len(whole) > 10 || len(frac) > 9 || strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return 0, bad
	}
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, bad
	}
	ns := int64(0)
	if frac != "" {
		f, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		ns = f
	}
	return time.Duration(sec)*time.Second + time.Duration(ns), nil
}

func formatUptime(d time.Duration) string {
	return fmt.Sprintf("%d.%02d", d/time.Second, (d%time.Second)/(10*time.Millisecond))
}

func clip(s string) string {
	if len(s) > 24 {
		return strings.ToValidUTF8(s[:24], "") + "…"
	}
	return s
}
