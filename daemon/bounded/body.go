package bounded

import (
	"io"
	"runtime/debug"
)

// ReadBody reads at most max+1 bytes of r (a caller tells an answer over max by its length). The
// buffer is sized from announced (an answer's Content-Length, -1 when none) when it is within
// max, so a large answer costs its size once instead of io.ReadAll's doublings and their copies;
// without one it grows as append grows it.
func ReadBody(r io.Reader, announced, max int64) ([]byte, error) {
	size := int64(512)
	if announced >= 0 && announced <= max {
		size = announced + 1 // room for the read that sees EOF
	}
	buf := make([]byte, 0, min(size, max+1))
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := buf[len(buf):min(int64(cap(buf)), max+1)]
		n, err := r.Read(room)
		buf = buf[:len(buf)+n]
		switch {
		case int64(len(buf)) > max:
			return buf, nil
		case err == io.EOF:
			return buf, nil
		case err != nil:
			return buf, err
		}
	}
}

// Release hands the memory of a refused answer of n bytes back to the system now. An idle daemon
// may not collect for two minutes, and until then the answer and its decoding stay resident; a
// refusal is rare (a broken or hostile server), so a forced collection then costs nothing that
// matters, and answers under 1 MiB are left to the runtime.
func Release(n int) {
	if n >= 1<<20 {
		debug.FreeOSMemory()
	}
}
