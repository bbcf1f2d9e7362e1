package cfaccess

import (
	"sync"
	"sync/atomic"
	"time"
)

// budget is the token bucket of refusals, shared by every caller: each
// refusal takes a token, tokens come back at rate per second up to burst.
// Only refusals take from it, and it decides nothing: a valid assertion is
// accepted and an invalid one refused whatever it holds. Empty, it says a
// flood is under way (Verifier.Flooding).
type budget struct {
	now   func() time.Time
	burst float64
	rate  float64 // tokens per second

	mu     sync.Mutex
	tokens float64
	at     time.Time // when tokens was last brought up to date
}

func newBudget(now func() time.Time, burst int, rate float64) *budget {
	return &budget{now: now, burst: float64(burst), rate: rate, tokens: float64(burst), at: now()}
}

// refillLocked brings tokens up to date. A clock that went backwards adds
// nothing rather than taking tokens away.
func (b *budget) refillLocked() {
	t := b.now()
	if d := t.Sub(b.at); d > 0 {
		b.tokens = min(b.burst, b.tokens+d.Seconds()*b.rate)
	}
	b.at = t
}

// take spends one token, reporting false when there was none.
func (b *budget) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked()
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// available reports whether a failure now would find a token.
func (b *budget) available() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refillLocked()
	return b.tokens >= 1
}

// Stats are the verifier's counters since New, for diagnostics and tests.
type Stats struct {
	Accepted uint64
	// Refused counts refusals by reason; every Reason is present.
	Refused map[Reason]uint64
	// SignatureChecks counts RSA verifications made, valid or not: the CPU
	// an attacker can spend is this, never more.
	SignatureChecks uint64
	// BudgetExhausted counts refusals that found the failure budget empty
	// (a flood of invalid assertions).
	BudgetExhausted uint64
	// Fetches and FetchFailures count GETs of the certs URL; a failure keeps
	// the keys already held. LastFetchError is the latest failure ("" after
	// a success).
	Fetches        uint64
	FetchFailures  uint64
	LastFetchError string
	// RefetchesSuppressed counts unknown kids not looked up because the last
	// fetch was within RefetchEvery.
	RefetchesSuppressed uint64
	// Keys is how many signing keys are held now.
	Keys int
}

// counters are Stats' live form; every field is updated without a lock
// because Verify runs on many goroutines at once.
type counters struct {
	accepted            atomic.Uint64
	refused             [len(reasons)]atomic.Uint64
	signatureChecks     atomic.Uint64
	budgetExhausted     atomic.Uint64
	fetches             atomic.Uint64
	fetchFailures       atomic.Uint64
	refetchesSuppressed atomic.Uint64
}

func (c *counters) countRefusal(r Reason) {
	for i, x := range reasons {
		if x == r {
			c.refused[i].Add(1)
			return
		}
	}
}
