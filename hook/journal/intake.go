package journal

// The intake log is the daemon's write-ahead log for hook events. A hook
// waits for the daemon's ack on EmulationStation's path, and the ack means
// "persisted". Committing the event to the store first costs two fsyncs plus
// the tracker and every message it produces; appending it here costs one
// fdatasync of a block that is already allocated. So the daemon appends,
// fdatasyncs, acks, and applies the event to the store just after; at start
// it applies whatever a crash left here. Events carry keys, so one applied
// twice (a crash between the store's commit and Done) counts once.
// Whoever owns the store applies the log first: the daemon, or a hook
// running alone after the daemon died.
//
// The file has a fixed size, written with zeros when created, so an append
// never changes its size or allocates blocks and fdatasync flushes only the
// data. A header holds the current epoch; every record carries the epoch
// and a checksum. When everything appended has been applied, Done starts a
// new epoch, which retires the old records without erasing them.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

const (
	// IntakeCapacity is the file's size: about 800 events of a few hundred bytes,
	// far more than ES fires between two applies.
	IntakeCapacity = 256 << 10
	// MaxIntakeRecord bounds one record's payload.
	MaxIntakeRecord = 16 << 10
	headerSize      = 32
	recHeader       = 16 // length u32, epoch u64, crc u32
	magic           = "CABINTK1"
)

// ErrIntakeFull means the log has no room left: the caller applies the event to
// the store itself (the slow path) until Done makes room.
var ErrIntakeFull = errors.New("intake: log full")

// IntakeLog is an open intake file. Its methods are safe for concurrent use.
type IntakeLog struct {
	mu      sync.Mutex
	f       *os.File
	epoch   uint64
	off     int64    // where the next record goes
	pending [][]byte // appended, not yet Done
}

// OpenIntake opens (creating it when absent) the log at path and reads the
// records a previous run appended and never marked done: Pending returns
// them, in order.
func OpenIntake(path string) (*IntakeLog, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the intake log: %w", err)
	}
	l := &IntakeLog{f: f}
	if err := l.load(); err != nil {
		f.Close()
		return nil, fmt.Errorf("intake log %s: %w", path, err)
	}
	return l, nil
}

// OpenExistingIntake opens the log at path only if it exists (nil, nil
// otherwise): a hook running alone must not create the daemon's file.
func OpenExistingIntake(path string) (*IntakeLog, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return OpenIntake(path)
}

func (l *IntakeLog) load() error {
	fi, err := l.f.Stat()
	if err != nil {
		return err
	}
	// Read as far as the records go, not the whole file: usually the log
	// is empty, and a hook running alone reads it on ES's path.
	limit := int(min(fi.Size(), IntakeCapacity))
	buf := make([]byte, 0, min(limit, 32<<10))
	var (
		epoch uint64
		recs  [][]byte
		end   int64
	)
	for {
		n := min(limit, max(len(buf)*2, 32<<10))
		buf = append(buf, make([]byte, n-len(buf))...)
		if _, err := io.ReadFull(io.NewSectionReader(l.f, 0, int64(n)), buf); err != nil {
			return fmt.Errorf("read: %w", err)
		}
		epoch, recs, end = ParseIntake(buf)
		if n == limit || end+recHeader+MaxIntakeRecord <= int64(n) {
			break
		}
	}
	if fi.Size() != IntakeCapacity {
		// New, or cut short by hand: give it its full size in real zeros
		// (not a sparse hole: filling a hole changes metadata, and then
		// fdatasync is a journal commit).
		if err := l.fill(fi.Size()); err != nil {
			return err
		}
	}
	l.epoch, l.pending, l.off = epoch, recs, end
	if len(buf) < headerSize || headerEpoch(buf) != epoch || epoch == 0 {
		// New, or a header torn by a power cut: write it (with the epoch
		// the records name, when there are some).
		l.epoch = max(epoch, 1)
		if err := l.writeHeader(); err != nil {
			return err
		}
	}
	return nil
}

// fill writes zeros from size to Capacity and syncs the file and its
// folder, so the file is there, whole, after a power cut.
func (l *IntakeLog) fill(size int64) error {
	if size > IntakeCapacity {
		if err := l.f.Truncate(IntakeCapacity); err != nil {
			return fmt.Errorf("resize: %w", err)
		}
	} else if _, err := l.f.WriteAt(make([]byte, IntakeCapacity-size), size); err != nil {
		return fmt.Errorf("allocate: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	if d, err := os.Open(filepath.Dir(l.f.Name())); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Append writes p as one record and returns once it is on disk.
func (l *IntakeLog) Append(p []byte) error {
	if len(p) == 0 || len(p) > MaxIntakeRecord {
		return fmt.Errorf("intake: record of %d bytes (1 to %d)", len(p), MaxIntakeRecord)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("intake: log closed")
	}
	if l.off+recHeader+int64(len(p)) > IntakeCapacity {
		return ErrIntakeFull
	}
	rec := make([]byte, recHeader+len(p))
	binary.LittleEndian.PutUint32(rec[0:], uint32(len(p)))
	binary.LittleEndian.PutUint64(rec[4:], l.epoch)
	copy(rec[recHeader:], p)
	binary.LittleEndian.PutUint32(rec[12:], recordCRC(rec[4:12], p))
	if _, err := l.f.WriteAt(rec, l.off); err != nil {
		return fmt.Errorf("intake: write: %w", err)
	}
	if err := unix.Fdatasync(int(l.f.Fd())); err != nil {
		// The record may or may not be on disk: leave it where it is (a
		// later append overwrites it) and let the caller take the slow path.
		return fmt.Errorf("intake: sync: %w", err)
	}
	l.off += int64(len(rec))
	l.pending = append(l.pending, p)
	return nil
}

// Pending returns the records not yet marked done, oldest first.
func (l *IntakeLog) Pending() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]byte(nil), l.pending...)
}

// Done marks the n oldest pending records as applied. When none remain it
// starts a new epoch, which retires every record in the file.
func (l *IntakeLog) Done(n int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n < 0 || n > len(l.pending) {
		return fmt.Errorf("intake: done %d of %d pending", n, len(l.pending))
	}
	l.pending = l.pending[n:]
	if len(l.pending) > 0 || l.f == nil || l.off == headerSize {
		return nil
	}
	l.epoch++
	if err := l.writeHeader(); err != nil {
		// The old epoch stays in force: its records are applied again at
		// the next start, which their keys make harmless.
		l.epoch--
		return err
	}
	l.off = headerSize
	return nil
}

func (l *IntakeLog) writeHeader() error {
	var h [headerSize]byte
	copy(h[:], magic)
	binary.LittleEndian.PutUint64(h[8:], l.epoch)
	binary.LittleEndian.PutUint32(h[16:], crc32.Checksum(h[:16], castagnoli()))
	if _, err := l.f.WriteAt(h[:], 0); err != nil {
		return fmt.Errorf("intake: write header: %w", err)
	}
	if err := unix.Fdatasync(int(l.f.Fd())); err != nil {
		return fmt.Errorf("intake: sync header: %w", err)
	}
	return nil
}

// Close closes the file; pending records stay for the next Open.
func (l *IntakeLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// ParseIntake reads a log image: the epoch in force (0 when there is none), the
// records of that epoch in order, and the offset after the last one. It
// stops at the first record that is absent, torn, of another epoch or
// damaged: appends are sequential and each is synced before the next, so
// anything after it was never acknowledged.
func ParseIntake(b []byte) (epoch uint64, recs [][]byte, end int64) {
	if len(b) < headerSize {
		return 0, nil, headerSize
	}
	epoch = headerEpoch(b)
	if epoch == 0 && len(b) >= headerSize+recHeader {
		// A damaged header (a torn write of it): the first record still
		// names the epoch, and what it leads is kept, not dropped.
		epoch = binary.LittleEndian.Uint64(b[headerSize+4:])
	}
	off := int64(headerSize)
	for epoch != 0 && off+recHeader <= int64(len(b)) {
		n := int64(binary.LittleEndian.Uint32(b[off:]))
		if n == 0 || n > MaxIntakeRecord || off+recHeader+n > int64(len(b)) {
			break
		}
		if binary.LittleEndian.Uint64(b[off+4:]) != epoch {
			break
		}
		p := b[off+recHeader : off+recHeader+n]
		if binary.LittleEndian.Uint32(b[off+12:]) != recordCRC(b[off+4:off+12], p) {
			break
		}
		recs = append(recs, append([]byte(nil), p...))
		off += recHeader + n
	}
	if epoch != 0 && headerEpoch(b) == 0 && len(recs) == 0 {
		epoch = 0 // neither header nor record: nothing to keep
	}
	return epoch, recs, off
}

// headerEpoch is the header's epoch, 0 when the header is not valid.
func headerEpoch(b []byte) uint64 {
	if string(b[:len(magic)]) != magic || binary.LittleEndian.Uint32(b[16:]) != crc32.Checksum(b[:16], castagnoli()) {
		return 0
	}
	return binary.LittleEndian.Uint64(b[8:])
}

func recordCRC(epoch, p []byte) uint32 {
	t := castagnoli()
	return crc32.Update(crc32.Checksum(epoch, t), t, p)
}

// castagnoli is built on first use (the standard library caches it), not
// at package init: every hook run pays for every package's init.
func castagnoli() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }
