package household

import (
	"fmt"
	"slices"
	"strings"
)

// Profiles (issue 32): a household names its players in cabinet.household.profiles (alice,bob);
// each has its own rules, cabinet.household.profile.<name>.<rule>, where a rule it does not set
// is the cabinet's, and may name its game pad, cabinet.household.profile.<name>.pad (the pad's
// unique id or Bluetooth address, as `cabinet doctor` lists the controllers). No profile chosen
// means the cabinet's rules.

// ProfilesKey lists the household's profiles.
const ProfilesKey = Prefix + "profiles"

// MaxProfiles bounds the profiles of a household.
const MaxProfiles = 8

// Profile is one player's rules.
type Profile struct {
	Name string
	// Pad is the game pad bound to the player ("" none): its unique id or MAC, lower case.
	Pad   string
	Rules Rules
}

// Holds says whether the pad whose controllers.Pad key is key is the profile's: its id, or the
// same pad's second joystick (key#2…).
func (p Profile) Holds(key string) bool {
	k := strings.ToLower(key)
	return p.Pad != "" && (k == p.Pad || strings.HasPrefix(k, p.Pad+"#"))
}

// reservedProfile says why p cannot name a profile: it reads as a rule key, or is not a name.
func reservedProfile(p string) string {
	if !ProfileName(p) {
		return "a profile's name is 1 to 32 of a-z, 0-9 and _"
	}
	for _, k := range Keys() {
		first, _, _ := strings.Cut(strings.TrimPrefix(k.Name, Prefix), ".")
		if p == first {
			return fmt.Sprintf("%q is the name of a rule (cabinet.household.%s…): choose another name", p, first)
		}
	}
	switch p {
	case "profile", "profiles", "pad", "none":
		return fmt.Sprintf("%q is reserved: choose another name", p)
	}
	return ""
}

// ParseProfiles reads cabinet.household.profiles: the names, in order, or what is wrong.
func ParseProfiles(v string) ([]string, error) {
	var names []string
	for _, p := range strings.Split(v, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "" {
			continue
		}
		if why := reservedProfile(p); why != "" {
			return nil, fmt.Errorf("%s=%q: %s", ProfilesKey, clip(v), why)
		}
		if slices.Contains(names, p) {
			return nil, fmt.Errorf("%s=%q: %s is listed twice", ProfilesKey, clip(v), p)
		}
		names = append(names, p)
	}
	if len(names) > MaxProfiles {
		return nil, fmt.Errorf("%s=%q: at most %d profiles", ProfilesKey, clip(v), MaxProfiles)
	}
	return names, nil
}

// For is the rules of the profile named name: the cabinet's when name is "" or no profile of
// the household. A profile's rules are never switched on or off on their own: enabled is the
// household's.
func (r Rules) For(name string) Rules {
	for _, p := range r.Profiles {
		if p.Name == name {
			pr := p.Rules
			pr.Enabled, pr.Profiles = r.Enabled, nil
			return pr
		}
	}
	base := r
	base.Profiles = nil
	return base
}

// Profile is the profile named name.
func (r Rules) Profile(name string) (Profile, bool) {
	i := slices.IndexFunc(r.Profiles, func(p Profile) bool { return p.Name == name })
	if i < 0 {
		return Profile{}, false
	}
	return r.Profiles[i], true
}

// ProfileNames are the profiles' names, in the household's order.
func (r Rules) ProfileNames() []string {
	names := make([]string, len(r.Profiles))
	for i, p := range r.Profiles {
		names[i] = p.Name
	}
	return names
}

// profileKey splits cabinet.household.profile.<name>.<rest>.
func profileKey(k string) (name, rest string, ok bool) {
	p, ok := strings.CutPrefix(k, ProfilePrefix)
	if !ok {
		return "", "", false
	}
	return strings.Cut(p, ".")
}

// applyProfiles builds the profiles of values over the cabinet's rules r: each starts as r and
// takes its own keys. A profile key of a profile not listed is an error, as is a bad value.
func applyProfiles(r *Rules, values map[string]string, names []string) []error {
	var errs []error
	for _, name := range names {
		p := Profile{Name: name, Rules: *r}
		p.Rules.Profiles = nil
		p.Rules.WarnAt = slices.Clone(r.WarnAt)
		r.Profiles = append(r.Profiles, p)
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		if strings.HasPrefix(k, ProfilePrefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		name, rest, _ := profileKey(k)
		i := slices.IndexFunc(r.Profiles, func(p Profile) bool { return p.Name == name })
		if i < 0 {
			errs = append(errs, fmt.Errorf("%s: no profile %q in %s (it lists %s)", k, name, ProfilesKey, listed(names)))
			continue
		}
		if rest == "pad" {
			r.Profiles[i].Pad = strings.ToLower(strings.TrimSpace(values[k]))
			if len(r.Profiles[i].Pad) > 64 {
				errs = append(errs, fmt.Errorf("%s: a pad's id is at most 64 characters", k))
				r.Profiles[i].Pad = ""
			}
			continue
		}
		if err := r.Profiles[i].Rules.set(k, values[k]); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func listed(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
