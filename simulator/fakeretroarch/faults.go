package fakeretroarch

import "time"

// faults are injected misbehaviours, settable at any time.
type faults struct {
	latency  time.Duration
	loss     float64 // fraction of datagrams dropped
	lossAcc  float64 // accumulator making loss deterministic
	dropNext int
	down     bool
}

// SetLatency delays the handling of every datagram by d, like a RetroArch
// whose main loop is busy (loading, or a slow frame). 0 turns it off.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flt.latency = max(d, 0)
}

// SetLoss drops the given fraction (0–1) of incoming datagrams, unanswered
// and without effect. The choice is deterministic: with 0.25, every fourth
// datagram is lost, so tests need no seed.
func (s *Server) SetLoss(fraction float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flt.loss = min(max(fraction, 0), 1)
	s.flt.lossAcc = 0
}

// DropNext drops the next n incoming datagrams.
func (s *Server) DropNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flt.dropNext = max(n, 0)
}

// SetDown closes the socket even while a game runs (network commands off, or
// RetroArch crashed); SetDown(false) reopens it on the same address if a game
// is loaded. The game state is kept.
func (s *Server) SetDown(down bool) error {
	s.mu.Lock()
	s.flt.down = down
	var err error
	var closing *listener
	if down {
		closing = s.detachLocked()
	} else {
		err = s.openLocked()
	}
	s.notifyLocked()
	s.mu.Unlock()
	closing.shutdown()
	return err
}

// admit counts a datagram and applies loss; it returns the latency to wait
// before handling it.
func (s *Server) admit() (delay time.Duration, drop bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.notifyLocked()
	s.rec.datagrams++
	if s.flt.dropNext > 0 {
		s.flt.dropNext--
		s.rec.dropped++
		return 0, true
	}
	if s.flt.loss > 0 {
		s.flt.lossAcc += s.flt.loss
		if s.flt.lossAcc >= 1 {
			s.flt.lossAcc--
			s.rec.dropped++
			return 0, true
		}
	}
	return s.flt.latency, false
}
