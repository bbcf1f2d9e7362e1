// Package fakeromm is a fake RomM server: an http.Handler answering the
// read side of RomM's REST API, and the writes a cabinet makes (pair-code
// exchange, the device flow, devices, activity heartbeats, play sessions,
// save sync), the way RomM 4.8.0 to 5.3.1 answer them, with JSON shaped by RomM's own
// 5.3.1 OpenAPI document (the conformance tests run it behind Stoplight
// Prism's validating proxy).
//
// It serves a small library of real files generated in Go at start (single
// ROMs, a one-member zip, a multi-member zip, a multi-disc folder, across
// platforms whose fs_slug is a Batocera folder, one whose fs_slug is not and
// one that maps to nothing), hashed the way RomM's scanner hashes them, and
// the bytes themselves for download. Options.Generate adds synthetic ROMs,
// computed on the fly, for benchmarks; AddROM and AddPlatform add a test's
// own after the fixture (a hostile name, an arcade set, a wrong hash);
// AddSave puts a save in place as another device's upload, or a hostile one.
// Versions change what RomM changed between releases (heartbeat version,
// query flags, 401/403, routes); Faults make it misbehave on the wire;
// every request is recorded.
//
// The zero value serves Options{}; New validates Options. The package is
// linked by `cabinet simulate`/`cabinet demo`, so it imports no test code.
package fakeromm

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Versions the fake can be.
const (
	Version480         = "4.8.0"
	Version500         = "5.0.0"
	Version510         = "5.1.0"
	Version531         = "5.3.1"
	VersionDevelopment = "development" // an unversioned build: behaves as the newest
	DefaultVersion     = Version531
)

// DefaultToken is the client API token the fake accepts when
// Options.Token is empty: RomM's "rmm_" + 64 hex digits.
const DefaultToken = "rmm_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// Scopes RomM defines for reads (handler/auth/constants.py).
const (
	ScopeMeRead          = "me.read"
	ScopeRomsRead        = "roms.read"
	ScopePlatformsRead   = "platforms.read"
	ScopeAssetsRead      = "assets.read"
	ScopeDevicesRead     = "devices.read"
	ScopeFirmwareRead    = "firmware.read"
	ScopeRomsUserRead    = "roms.user.read"
	ScopeCollectionsRead = "collections.read"
)

// ReadScopes is RomM's READ_SCOPES, the default scope set of the token.
func ReadScopes() []string {
	return []string{ScopeMeRead, ScopeRomsRead, ScopePlatformsRead, ScopeAssetsRead, ScopeDevicesRead,
		ScopeFirmwareRead, ScopeRomsUserRead, ScopeCollectionsRead, "playlists.read"}
}

// Limits of Options.Generate: enough for the 50,000-ROM benchmark with room
// to spare, small enough that a typo cannot take the machine's memory.
const (
	MaxSyntheticROMs      = 1_000_000
	MaxSyntheticPlatforms = 1_000
)

// Scale asks for synthetic ROMs spread over synthetic platforms (added
// after the fixture library). Their fields, hashes and bytes are computed
// from their id when asked for; only an ordering index is kept.
type Scale struct {
	ROMs      int
	Platforms int
}

// Options configure a Server. The zero value is RomM 5.3.1 with the
// fixture library, DefaultToken holding ReadScopes.
type Options struct {
	// Version is one of the Version* constants; "" means DefaultVersion.
	Version string
	// Token is the one bearer token accepted; "" means DefaultToken.
	Token string
	// Scopes the token holds; nil means ReadScopes(). An empty non-nil
	// slice is a token with no scopes (every protected route 403s).
	Scopes []string
	// Generate adds synthetic ROMs (see Scale).
	Generate Scale
	// ReferenceDir holds RomM's OpenAPI documents (romm-openapi-5.1.0.json,
	// romm-openapi-5.3.1.json) for GET /openapi.json; "" means
	// ../shared/reference beside the module root above the working
	// directory. Without them a minimal document is served (see OpenAPISource).
	ReferenceDir string
	// Now is the fixed time stamped on every record; zero means
	// 2025-06-01T12:00:00Z, so responses are reproducible.
	Now time.Time
}

// Server is the fake. It is safe for concurrent use.
type Server struct {
	opts Options
	once sync.Once
	err  error

	ver     version
	lib     *library
	libMu   sync.RWMutex // held by requests to read lib, by AddROM and AddPlatform to change it
	handler http.Handler
	doc     openAPIDoc

	mu       sync.Mutex
	faults   Faults
	hostile  Hostile
	revoked  bool
	requests []Request
	dropped  int
	seq      uint64

	state writeState // devices, tokens, activity, play sessions (state.go)
}

// New returns a Server for opts, or an error naming the option to fix.
func New(opts Options) (*Server, error) {
	s := &Server{opts: opts}
	s.init()
	if s.err != nil {
		return nil, s.err
	}
	return s, nil
}

// init builds the library once; the zero Server builds it on first use.
func (s *Server) init() {
	s.once.Do(func() {
		o := s.opts
		if o.Version == "" {
			o.Version = DefaultVersion
		}
		if o.Token == "" {
			o.Token = DefaultToken
		}
		if o.Scopes == nil {
			o.Scopes = ReadScopes()
		}
		if o.Now.IsZero() {
			o.Now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
		}
		v, err := parseVersion(o.Version)
		if err != nil {
			s.err = err
			return
		}
		if g := o.Generate; g.ROMs < 0 || g.ROMs > MaxSyntheticROMs || g.Platforms < 0 || g.Platforms > MaxSyntheticPlatforms {
			s.err = fmt.Errorf("fakeromm: Options.Generate must be 0..%d ROMs over 0..%d platforms, got %d over %d",
				MaxSyntheticROMs, MaxSyntheticPlatforms, g.ROMs, g.Platforms)
			return
		}
		if o.Generate.ROMs > 0 && o.Generate.Platforms == 0 {
			s.err = errors.New("fakeromm: Options.Generate.ROMs needs at least one platform (set Generate.Platforms)")
			return
		}
		lib, err := buildLibrary(o.Now, o.Generate)
		if err != nil {
			s.err = fmt.Errorf("fakeromm: build library: %w", err)
			return
		}
		s.opts, s.ver, s.lib = o, v, lib
		s.doc = loadOpenAPI(o.ReferenceDir, o.Version)
		s.handler = lockedHandler{s, s.routes()}
	})
}

// Version is the RomM version the server plays.
func (s *Server) Version() string {
	s.init()
	return s.opts.Version
}

// Token is the bearer token the server accepts.
func (s *Server) Token() string {
	s.init()
	return s.opts.Token
}

// ServeHTTP answers one request (faults first, then RomM) and records it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.init()
	if s.err != nil {
		http.Error(w, s.err.Error(), http.StatusInternalServerError)
		return
	}
	seq := s.record(r)
	sw := &statusWriter{ResponseWriter: w}
	defer func() { s.recordStatus(seq, sw.status) }()
	if s.applyFaults(sw, r) || s.serveHostile(sw, r) {
		return
	}
	s.handler.ServeHTTP(sw, r)
}
