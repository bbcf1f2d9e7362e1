package fakeromm

import "time"

// The write side keeps time the way RomM's Redis keys do: pair codes
// (60 s), device-flow requests (600 s), poll pacing (5 s) and activity
// entries (90 s) expire by a clock. Options.Now stays the fixed stamp of
// the library; the write side reads the server's clock, which is real
// time until SetClock replaces it, so `cabinet simulate` behaves as RomM
// does and a test can move time without sleeping (SetClock(fake.Now), with a
// *clock.Fake of daemon/clock).

// SetClock makes now the server's clock for expiry, pacing and the
// timestamps of what clients write; nil restores real time.
func (s *Server) SetClock(now func() time.Time) {
	s.init()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	s.state.clock = now
}

// now reads the clock; the caller holds s.state.mu.
func (s *Server) now() time.Time {
	if s.state.clock != nil {
		return s.state.clock()
	}
	return time.Now()
}

// pyISO is Python's datetime.isoformat() of a UTC time: microseconds
// only when there are some, "+00:00" for the zone.
func pyISO(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05") + "+00:00"
	}
	return t.Format("2006-01-02T15:04:05.000000") + "+00:00"
}

// pydanticTime is how pydantic v2 serialises an aware datetime: "Z" for
// UTC (PlaySessionSchema's fields are plain datetimes, not UTCDatetime).
func pydanticTime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000000Z")
}
