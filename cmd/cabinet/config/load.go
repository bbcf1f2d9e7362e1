package config

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
)

// DefaultFile is Batocera's settings file, read unless CABINET_CONFIG names
// another one.
const DefaultFile = "/userdata/system/batocera.conf"

// Origin says where a value came from.
type Origin string

// Origins, lowest precedence first.
const (
	FromDefault Origin = "default"
	FromFile    Origin = "file"
	FromEnv     Origin = "env"
	FromFlag    Origin = "flag"
)

// Source is the provenance of one effective value.
type Source struct {
	Origin Origin
	Where  string // "batocera.conf line 12", "CABINET_MQTT_BROKER", "--set"
}

// Inputs are everything Load reads, passed in so tests need no real
// environment.
type Inputs struct {
	Environ []string // os.Environ()
	Sets    []string // --set key=value, in order; later wins
	// ReadFile reads the config and secret files; nil means os.ReadFile
	// with a size bound.
	ReadFile func(name string) ([]byte, error)
}

// Loaded is the outcome of Load: the effective configuration, where each
// value came from, the warnings, and the validation error (nil when valid).
type Loaded struct {
	Config Config
	File   string
	// RetroAchievements says whether the file turns Batocera's RetroAchievements on (any
	// <scope>.retroachievements=1): read with the file, so no caller reads it again.
	RetroAchievements bool
	Sources           map[string]Source
	Warnings          []string
	Err               error
}

type rawValue struct {
	value string
	src   Source
}

// Load builds the configuration: defaults, then the file (CABINET_CONFIG or
// batocera.conf under cabinet.paths.root), then CABINET_<KEY> variables,
// then --set flags, then secret files; every value is validated. A missing
// file is not an error (a fresh cabinet has no cabinet.* keys yet).
func Load(in Inputs) *Loaded {
	read := in.ReadFile
	if read == nil {
		read = func(name string) ([]byte, error) { return bounded.ReadFile(name, maxFileBytes) }
	}
	ks := keys()
	raw := make(map[string]rawValue, len(ks))
	for _, k := range ks {
		raw[k.name] = rawValue{k.def, Source{Origin: FromDefault}}
	}
	out := &Loaded{Sources: map[string]Source{}}
	profiles := map[string]string{}

	env := map[string]string{}
	for _, kv := range in.Environ {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "CABINET_") {
			env[k] = v
		}
	}
	var sets []Entry
	for i, s := range in.Sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			out.Warnings = append(out.Warnings, fmt.Sprintf("--set %q: want key=value, ignored", clip(s)))
			continue
		}
		sets = append(sets, Entry{Key: strings.TrimSpace(k), Value: v, Line: i + 1})
	}

	// The file's location may itself depend on cabinet.paths.root, which
	// can only come from the environment or a flag at this point.
	root := env[EnvName("cabinet.paths.root")]
	for _, e := range sets {
		if e.Key == "cabinet.paths.root" {
			root = e.Value
		}
	}
	out.File = ResolvePath(root, DefaultFile)
	if f, ok := env["CABINET_CONFIG"]; ok && f != "" {
		out.File = f
	}
	data, err := read(out.File)
	switch {
	case err == nil:
		out.RetroAchievements = batoconf.RetroAchievementsOn(data)
		entries, warns := ParseFile(data, out.File)
		out.Warnings = append(out.Warnings, warns...)
		for _, e := range entries {
			if _, known := lookupKey(ks, e.Key); !known {
				where := fmt.Sprintf("%s line %d", out.File, e.Line)
				if strings.HasPrefix(e.Key, household.ProfilePrefix) {
					profiles[e.Key] = e.Value
					if err := household.Check(e.Key, e.Value); err != nil {
						out.Warnings = append(out.Warnings, fmt.Sprintf("%s: %v (ignored)", where, err))
						delete(profiles, e.Key)
					}
					continue
				}
				out.Warnings = append(out.Warnings, unknownKey(ks, e.Key, where))
				continue
			}
			raw[e.Key] = rawValue{e.Value, Source{FromFile, fmt.Sprintf("%s line %d", out.File, e.Line)}}
		}
	case errors.Is(err, os.ErrNotExist):
		if _, explicit := env["CABINET_CONFIG"]; explicit {
			out.Warnings = append(out.Warnings, fmt.Sprintf("CABINET_CONFIG=%s does not exist; using defaults", out.File))
		}
	default:
		out.Warnings = append(out.Warnings, fmt.Sprintf("read %s: %v; using defaults and overrides only", out.File, err))
	}
	for _, k := range ks {
		if v, ok := env[EnvName(k.name)]; ok {
			raw[k.name] = rawValue{v, Source{FromEnv, EnvName(k.name)}}
		}
	}
	for _, e := range sets {
		if _, known := lookupKey(ks, e.Key); !known {
			out.Warnings = append(out.Warnings, unknownKey(ks, e.Key, "--set"))
			continue
		}
		raw[e.Key] = rawValue{e.Value, Source{FromFlag, "--set"}}
	}

	var problems []error
	root = raw["cabinet.paths.root"].value
	for _, k := range ks {
		if k.fileOf == "" || raw[k.name].value == "" {
			continue
		}
		if !k.check(raw[k.name].value) {
			continue // reported below with the other bad values
		}
		p := ResolvePath(root, raw[k.name].value)
		b, err := read(p)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s=%s (%s): cannot read it: %w; fix the path or set %s directly",
				k.name, raw[k.name].value, raw[k.name].src.Where, err, k.fileOf))
			continue
		}
		if raw[k.fileOf].src.Origin != FromDefault {
			out.Warnings = append(out.Warnings, fmt.Sprintf("both %s and %s are set; the file wins", k.fileOf, k.name))
		}
		raw[k.fileOf] = rawValue{strings.TrimRight(string(b), "\r\n"), Source{Origin: raw[k.name].src.Origin, Where: "file " + p}}
	}

	for _, k := range ks {
		rv := raw[k.name]
		out.Sources[k.name] = rv.src
		if !k.check(rv.value) {
			shown := fmt.Sprintf("%q", clip(rv.value))
			if k.kind == kSecret {
				shown = "(secret, not shown)"
			}
			where := rv.src.Where
			if where == "" {
				where = string(rv.src.Origin)
			}
			if k.why != nil && k.kind != kSecret {
				problems = append(problems, fmt.Errorf("%s (%s): %s", k.name, where, k.why(rv.value)))
			} else {
				problems = append(problems, fmt.Errorf("%s = %s (%s): want %s", k.name, shown, where, k.expect))
			}
			k.set(&out.Config, k.def)
			continue
		}
		k.set(&out.Config, rv.value)
	}
	if len(profiles) > 0 {
		out.Config.Household.Profiles = profiles
		// A key of a profile cabinet.household.profiles does not list does nothing: say so.
		if _, errs := household.Parse(out.Config.Household.Merged()); len(errs) > 0 {
			for _, err := range errs {
				if strings.Contains(err.Error(), household.ProfilePrefix) {
					out.Warnings = append(out.Warnings, fmt.Sprintf("%s: %v (ignored)", out.File, err))
				}
			}
		}
	}
	out.Err = errors.Join(problems...)
	return out
}

// Validate re-checks a Config built in code (tests, the simulator) with the
// same rules Load applies to text.
func (c *Config) Validate() error {
	var problems []error
	for _, k := range keys() {
		if v := k.get(c); !k.check(v) {
			if k.kind == kSecret {
				v = "(secret, not shown)"
			}
			problems = append(problems, fmt.Errorf("%s = %q: want %s", k.name, v, k.expect))
		}
	}
	return errors.Join(problems...)
}

// Effective lists key, shown value (secrets masked) and source, in key order.
func (l *Loaded) Effective() [][3]string {
	ks := keys()
	rows := make([][3]string, 0, len(ks))
	for _, k := range ks {
		v := k.get(&l.Config)
		if k.kind == kSecret && v != "" {
			v = Mask
		}
		src := l.Sources[k.name]
		where := string(src.Origin)
		if src.Where != "" {
			where += ": " + src.Where
		}
		rows = append(rows, [3]string{k.name, v, where})
	}
	return rows
}

func unknownKey(ks []key, name, where string) string {
	msg := fmt.Sprintf("%s: unknown key %q", where, clip(name))
	if best := closest(ks, name); best != "" {
		msg += fmt.Sprintf("; did you mean %s?", best)
	}
	return msg
}

// closest finds the known key nearest to name by edit distance.
func closest(ks []key, name string) string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, k := range ks {
		cs = append(cs, cand{k.name, editDistance(name, k.name)})
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	if len(cs) == 0 || cs[0].d > len(name)/2+1 {
		return ""
	}
	return cs[0].name
}

func editDistance(a, b string) int {
	if len(a) > 256 || len(b) > 256 {
		return 1 << 20
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
