package cfaccess

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// fetchTimeout bounds one GET of the keys whatever client was passed in:
	// every caller waiting for keys waits on it.
	fetchTimeout = 5 * time.Second
	// noKeysRetry is how soon a fetch is tried again while no key is held
	// (the first fetch failed, say at boot before the network was up):
	// waiting a whole RefetchEvery would lock everyone out for that long.
	noKeysRetry = 5 * time.Second
	minKeyBits  = 2048
	maxKeyBits  = 8192
)

// keySource holds the signing keys by kid and fetches them from the certs
// URL: lazily on first use, again for a kid it does not know, at most once
// per every (a failure keeps the keys held). Concurrent callers share one
// fetch.
type keySource struct {
	url      string
	client   *http.Client
	maxBytes int64
	every    time.Duration
	now      func() time.Time
	stats    *counters

	// keys is replaced whole by each successful fetch, so lookups of known
	// kids, the path every valid assertion takes, need no lock.
	keys atomic.Pointer[map[string]*rsa.PublicKey]

	mu        sync.Mutex
	attempted time.Time // when the last fetch started; zero before the first
	inflight  *fetchCall
	lastErr   error
}

// fetchCall is one fetch in progress; done is closed when err is set.
type fetchCall struct {
	done chan struct{}
	err  error
}

func (s *keySource) key(kid string) *rsa.PublicKey {
	if m := s.keys.Load(); m != nil {
		return (*m)[kid]
	}
	return nil
}

// lookup returns the key for kid, fetching the keys when it is unknown and
// none was fetched in the last RefetchEvery (5 s while none is held). That
// alone bounds what unknown kids can make us fetch: at most one GET a
// minute, however many forgeries name one.
func (s *keySource) lookup(ctx context.Context, kid string) (*rsa.PublicKey, *Error) {
	if k := s.key(kid); k != nil {
		return k, nil
	}
	s.mu.Lock()
	if k := s.key(kid); k != nil {
		s.mu.Unlock()
		return k, nil
	}
	call := s.inflight
	if call == nil {
		held := s.keys.Load() != nil
		wait := s.every
		if !held {
			wait = min(wait, noKeysRetry)
		}
		since := s.now().Sub(s.attempted)
		recent := !s.attempted.IsZero() && since >= 0 && since < wait
		if recent {
			s.mu.Unlock()
			s.stats.refetchesSuppressed.Add(1)
			return nil, s.missing()
		}
		call = s.startLocked()
	}
	s.mu.Unlock()
	select {
	case <-call.done:
	case <-ctx.Done():
		return nil, refuse(ReasonKeys, "gave up waiting for the signing keys", ctx.Err())
	}
	if k := s.key(kid); k != nil {
		return k, nil
	}
	return nil, s.missing()
}

// refresh fetches the keys now, whatever RefetchEvery says, joining a fetch
// already under way.
func (s *keySource) refresh(ctx context.Context) error {
	s.mu.Lock()
	call := s.inflight
	if call == nil {
		call = s.startLocked()
	}
	s.mu.Unlock()
	select {
	case <-call.done:
		return call.err
	case <-ctx.Done():
		return fmt.Errorf("fetch signing keys: %w", ctx.Err())
	}
}

// startLocked starts a fetch on its own goroutine, so that a caller whose
// context ends stops waiting without cancelling the fetch for the others.
func (s *keySource) startLocked() *fetchCall {
	call := &fetchCall{done: make(chan struct{})}
	s.inflight = call
	s.attempted = s.now()
	go func() {
		err := s.fetch()
		s.mu.Lock()
		s.inflight, s.lastErr = nil, err
		s.mu.Unlock()
		call.err = err
		close(call.done)
	}()
	return call
}

// missing is the refusal for a kid not held after any fetch allowed.
func (s *keySource) missing() *Error {
	s.mu.Lock()
	lastErr := s.lastErr
	s.mu.Unlock()
	if s.keys.Load() == nil {
		detail := "no keys fetched yet"
		if lastErr != nil {
			detail = lastErr.Error()
		}
		return refuse(ReasonKeys, detail, lastErr)
	}
	detail := "key id not among the published keys"
	if lastErr != nil {
		detail += " (last fetch failed: " + lastErr.Error() + ")"
	}
	return refuse(ReasonUnknownKey, detail, lastErr)
}

func (s *keySource) fetch() error {
	s.stats.fetches.Add(1)
	keys, err := s.get()
	if err != nil {
		s.stats.fetchFailures.Add(1)
		return fmt.Errorf("fetch signing keys from %s: %w", s.url, err)
	}
	s.keys.Store(&keys)
	return nil
}

func (s *keySource) get() (map[string]*rsa.PublicKey, error) {
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w (check the team domain and the network)", err)
	}
	defer resp.Body.Close()
	// A redirect to plain http would let anyone on the path choose the keys.
	if err := checkCertsURL(resp.Request.URL); err != nil {
		return nil, fmt.Errorf("redirected: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d, want 200 (check the team domain)", resp.StatusCode)
	}
	tooBig := fmt.Errorf("body larger than %d bytes; is the certs URL right? (raise MaxKeysBytes if it is)", s.maxBytes)
	if resp.ContentLength > s.maxBytes {
		return nil, tooBig
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if int64(len(body)) > s.maxBytes {
		return nil, tooBig
	}
	return parseJWKS(body)
}

// jwks is the certs document; public_cert and public_certs repeat the keys
// as X.509 and are ignored.
type jwks struct {
	Keys []struct {
		Kid string `json:"kid"`
		Kty string `json:"kty"`
		Alg string `json:"alg"`
		Use string `json:"use"`
		N   string `json:"n"`
		E   string `json:"e"`
	} `json:"keys"`
}

// parseJWKS keeps the RS256 signing keys of a JWKS by kid. Keys of another
// type, use or algorithm, or of an implausible size, are skipped rather than
// refused, so one odd key does not cost the others; a set with no usable key
// is an error.
func parseJWKS(body []byte) (map[string]*rsa.PublicKey, error) {
	var set jwks
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("not a JWKS (is the certs URL right?): %w", err)
	}
	keys := make(map[string]*rsa.PublicKey, len(set.Keys))
	for _, k := range set.Keys {
		if k.Kid == "" || k.Kty != "RSA" || (k.Use != "" && k.Use != "sig") || (k.Alg != "" && k.Alg != "RS256") {
			continue
		}
		if _, dup := keys[k.Kid]; dup {
			continue
		}
		pub, err := rsaKey(k.N, k.E)
		if err != nil {
			continue
		}
		keys[k.Kid] = pub
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no usable key among %d published (want kty RSA, RS256, %d–%d bits)", len(set.Keys), minKeyBits, maxKeyBits)
	}
	return keys, nil
}

func rsaKey(n64, e64 string) (*rsa.PublicKey, error) {
	nb, err := decodeB64(n64)
	if err != nil {
		return nil, fmt.Errorf("modulus: %w", err)
	}
	eb, err := decodeB64(e64)
	if err != nil {
		return nil, fmt.Errorf("exponent: %w", err)
	}
	n := new(big.Int).SetBytes(nb)
	if bits := n.BitLen(); bits < minKeyBits || bits > maxKeyBits || n.Bit(0) == 0 {
		return nil, fmt.Errorf("modulus of %d bits", bits)
	}
	e := new(big.Int).SetBytes(eb)
	if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0 {
		return nil, errors.New("exponent out of range")
	}
	return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
}

// decodeB64 reads base64url with or without padding: RFC 7518 says without,
// but a stray "=" costs nothing to accept in a document we fetched over TLS.
func decodeB64(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

func (s *keySource) snapshot(st *Stats) {
	if m := s.keys.Load(); m != nil {
		st.Keys = len(*m)
	}
	s.mu.Lock()
	if s.lastErr != nil {
		st.LastFetchError = s.lastErr.Error()
	}
	s.mu.Unlock()
}
