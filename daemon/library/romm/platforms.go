package romm

import (
	"context"
	"encoding/json"
)

// Platform is one RomM platform. Slug is RomM's canonical platform id (snes, genesis, tg16);
// FSSlug is its folder in RomM's library, which is the Batocera folder when RomM uses the
// Batocera layout.
type Platform struct {
	ID       int
	Slug     string
	FSSlug   string
	Name     string // display name: the custom name when one is set
	ROMCount int
}

// Platforms lists RomM's platforms (a plain array, not paginated; 5.x hides the ones hidden from
// the user).
func (c *Client) Platforms(ctx context.Context) ([]Platform, error) {
	v, err := c.require(ctx, "platform list", 4, 0)
	if err != nil {
		return nil, err
	}
	body, err := c.fetch(ctx, request{path: "/api/platforms", max: maxJSON, scope: "platforms.read", version: v})
	if err != nil {
		return nil, err
	}
	return decodePlatforms(body)
}

type rawPlatform struct {
	ID          int64   `json:"id"`
	Slug        string  `json:"slug"`
	FSSlug      string  `json:"fs_slug"`
	Name        string  `json:"name"`
	CustomName  *string `json:"custom_name"`
	DisplayName *string `json:"display_name"`
	ROMCount    int64   `json:"rom_count"`
}

// decodePlatforms decodes GET /api/platforms. Unknown fields (firmware lists, provider ids) are
// skipped; wrong types and impossible numbers are errors.
func decodePlatforms(body []byte) ([]Platform, error) {
	var raw []rawPlatform
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, newError(ErrBadData, nil, "read RomM's platforms: %s", jsonProblem(err))
	}
	if len(raw) > maxPlatforms {
		return nil, newError(ErrBadData, nil, "RomM listed %d platforms, more than the %d the cabinet reads", len(raw), maxPlatforms)
	}
	out := make([]Platform, 0, len(raw))
	for i, p := range raw {
		id, ok := asID(p.ID)
		count, okCount := asCount(p.ROMCount)
		if !ok || !okCount {
			return nil, newError(ErrBadData, nil, "RomM's platform %d has an impossible id or rom_count", i)
		}
		out = append(out, Platform{
			ID:       id,
			Slug:     cleanLine(p.Slug, capSlug),
			FSSlug:   cleanLine(p.FSSlug, capSlug),
			Name:     displayName(p.DisplayName, p.CustomName, p.Name),
			ROMCount: count,
		})
	}
	return out, nil
}

// displayName is RomM's own rule (display_name = custom_name or name), applied here too because
// display_name only exists in newer versions.
func displayName(display, custom *string, name string) string {
	for _, s := range []*string{display, custom, &name} {
		if s != nil {
			if n := cleanLine(*s, capName); n != "" {
				return n
			}
		}
	}
	return ""
}

// asID accepts 0 (a schema mock's integer) and positive ids that fit an int32-sized database key.
func asID(n int64) (int, bool) {
	if n < 0 || n > 1<<31-1 {
		return 0, false
	}
	return int(n), true
}

// asCount accepts counts from 0 to a billion.
func asCount(n int64) (int, bool) {
	if n < 0 || n > 1e9 {
		return 0, false
	}
	return int(n), true
}
