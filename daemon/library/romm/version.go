package romm

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Version is RomM's SYSTEM.VERSION from /api/heartbeat.
type Version struct {
	Major, Minor, Patch int
	Pre                 string // "beta.3" in 5.1.0-beta.3
	// Development is a build without a version tag (RomM's get_version() says "development"); it
	// counts as newer than every release.
	Development bool
	Raw         string // as RomM sent it, cleaned
}

// versionTTL is how long a heartbeat answer is trusted: long enough that a search does not cost two
// round trips, short enough that an upgraded RomM is noticed within a minute.
const versionTTL = 60 * time.Second

// Version range the client was checked against; outside it the client still works "best effort".
const (
	verifiedMinMajor, verifiedMinMinor = 4, 8
	verifiedMaxMajor, verifiedMaxMinor = 5, 3
)

// Floors: the envelope of /api/roms and SYSTEM.VERSION are stable from 4.0; bearer client tokens
// (rmm_…) exist from 4.8, so a configured token on an older RomM cannot work.
const (
	floorMajor, floorMinor           = 4, 0
	tokenFloorMajor, tokenFloorMinor = 4, 8
)

// ParseVersion parses "5.3.1", "5.1.0-beta.3", "v5.2", "development". Build metadata after "+"
// is ignored. It is strict about everything else: the gates depend on it.
func ParseVersion(s string) (Version, error) {
	raw := strings.TrimSpace(s)
	if raw == "" {
		return Version{}, fmt.Errorf("parse RomM version: empty")
	}
	if len(raw) > 64 {
		return Version{}, fmt.Errorf("parse RomM version: longer than 64 bytes")
	}
	v := Version{Raw: untrusted.Clean(raw, 64)}
	if strings.EqualFold(raw, "development") {
		v.Development = true
		return v, nil
	}
	core := raw
	if len(core) > 0 && (core[0] == 'v' || core[0] == 'V') {
		core = core[1:]
	}
	core, build, hasBuild := strings.Cut(core, "+")
	if hasBuild && (build == "" || !preOK(build)) {
		return Version{}, fmt.Errorf("parse RomM version %q: bad build part", v.Raw)
	}
	core, pre, hasPre := strings.Cut(core, "-")
	if hasPre {
		if pre == "" || !preOK(pre) {
			return Version{}, fmt.Errorf("parse RomM version %q: bad pre-release part", v.Raw)
		}
		v.Pre = pre
	}
	parts := strings.Split(core, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("parse RomM version %q: want major.minor[.patch]", v.Raw)
	}
	nums := [3]int{}
	for i, p := range parts {
		n, ok := number(p)
		if !ok {
			return Version{}, fmt.Errorf("parse RomM version %q: %q is not a number", v.Raw, untrusted.Clean(p, 16))
		}
		nums[i] = n
	}
	v.Major, v.Minor, v.Patch = nums[0], nums[1], nums[2]
	return v, nil
}

// number accepts 1–6 ASCII digits (strconv.Atoi would take signs).
func number(s string) (int, bool) {
	if s == "" || len(s) > 6 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func preOK(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// AtLeast reports whether v is major.minor or newer. A pre-release counts as its own major.minor:
// RomM lands features in the first alpha of a minor (with_rom_id_index is in 5.1.0-alpha.1,
// /roms/{id}/simple in 5.0.0-alpha.1). Development counts as newest.
func (v Version) AtLeast(major, minor int) bool {
	if v.Development {
		return true
	}
	return v.Major > major || v.Major == major && v.Minor >= minor
}

// Verified reports whether v is inside the range this client was checked against (4.8–5.3); newer
// versions, and development builds, are used best effort.
func (v Version) Verified() bool {
	if v.Development {
		return false
	}
	return v.AtLeast(verifiedMinMajor, verifiedMinMinor) && !v.AtLeast(verifiedMaxMajor, verifiedMaxMinor+1)
}

func (v Version) String() string {
	if v.Raw != "" {
		return v.Raw
	}
	s := fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	if v.Pre != "" {
		s += "-" + v.Pre
	}
	return s
}

// decodeHeartbeat reads SYSTEM.VERSION. Everything else in the heartbeat changed shape between
// versions and is ignored. A non-string VERSION is an error, not a guess.
func decodeHeartbeat(body []byte) (Version, error) {
	var hb struct {
		System *struct {
			Version json.RawMessage `json:"VERSION"`
		} `json:"SYSTEM"`
	}
	if err := json.Unmarshal(body, &hb); err != nil {
		return Version{}, newError(ErrBadData, nil, "read RomM's heartbeat: %s", jsonProblem(err))
	}
	if hb.System == nil || len(hb.System.Version) == 0 {
		return Version{}, newError(ErrNotRomM, nil, "RomM's heartbeat has no SYSTEM.VERSION: is cabinet.romm.url the RomM address?")
	}
	var s string
	if err := json.Unmarshal(hb.System.Version, &s); err != nil {
		return Version{}, newError(ErrBadData, nil, "RomM's heartbeat SYSTEM.VERSION is not text: check that cabinet.romm.url points at RomM 4.0 or newer")
	}
	v, err := ParseVersion(s)
	if err != nil {
		return Version{}, newError(ErrBadData, nil, "RomM's heartbeat: %v: check that cabinet.romm.url points at a RomM release", err)
	}
	return v, nil
}

// Version asks RomM's heartbeat (no auth) for its version, cached for about a minute.
func (c *Client) Version(ctx context.Context) (Version, error) {
	now := c.now()
	c.mu.Lock()
	if c.haveVersion && now.Sub(c.versionAt) < versionTTL && !now.Before(c.versionAt) {
		v := c.version
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()

	body, err := c.fetch(ctx, request{path: "/api/heartbeat", noAuth: true, max: maxJSON})
	if err != nil {
		return Version{}, err
	}
	v, err := decodeHeartbeat(body)
	if err != nil {
		return Version{}, err
	}
	c.mu.Lock()
	c.version, c.versionAt, c.haveVersion = v, now, true
	c.mu.Unlock()
	return v, nil
}

// require returns RomM's version, or ErrUnsupported when it is older than major.minor (what names
// the feature for the message) or older than what a bearer token needs.
func (c *Client) require(ctx context.Context, what string, major, minor int) (Version, error) {
	v, err := c.Version(ctx)
	if err != nil {
		return Version{}, err
	}
	if !v.AtLeast(floorMajor, floorMinor) {
		return v, newError(ErrUnsupported, nil, "RomM %s is older than 4.0, which this cabinet needs: upgrade RomM", v)
	}
	if c.token != "" && !v.AtLeast(tokenFloorMajor, tokenFloorMinor) {
		return v, newError(ErrUnsupported, nil,
			"RomM %s is older than 4.8, the first version with client tokens: upgrade RomM to 4.8 or newer (or clear cabinet.romm.token if RomM runs in kiosk mode)", v)
	}
	if !v.AtLeast(major, minor) {
		return v, newError(ErrUnsupported, nil, "RomM %s has no %s (it came in %d.%d): upgrade RomM to %d.%d or newer",
			v, what, major, minor, major, minor)
	}
	return v, nil
}
