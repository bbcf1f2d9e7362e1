package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
)

// fakeRomM answers like romm.Client: a version (or versionErr), the
// probe's scope → error, the platforms (or platformsErr).
type fakeRomM struct {
	version      string
	versionErr   error
	scopes       map[string]error
	platforms    []romm.Platform
	platformsErr error
}

func (f fakeRomM) Version(context.Context) (romm.Version, error) {
	if f.versionErr != nil {
		return romm.Version{}, f.versionErr
	}
	return romm.ParseVersion(f.version)
}

func (f fakeRomM) ProbeScopes(context.Context) map[string]error {
	out := map[string]error{"roms.read": nil, "platforms.read": nil, "collections.read": nil}
	for s, err := range f.scopes {
		out[s] = err
	}
	return out
}

func (f fakeRomM) Platforms(context.Context) ([]romm.Platform, error) {
	return f.platforms, f.platformsErr
}

// fakeES lists systems (or fails with err); only Systems is asked.
type fakeES struct {
	systems []string
	err     error
}

func (f fakeES) Caps(context.Context) (es.Caps, error) { return es.Caps{}, f.err }
func (f fakeES) Systems(context.Context) ([]es.System, error) {
	var out []es.System
	for _, s := range f.systems {
		out = append(out, es.System{Name: s, GameSystem: true, Visible: true})
	}
	return out, f.err
}
func (f fakeES) RunningGame(context.Context) (*es.Game, error) { return nil, f.err }

// rommPlatforms are a RomM's platforms as the fake RomM has them: nes,
// megadrive (slug genesis), gb, Super Famicom (fs_slug sfam, slug snes)
// and iOS (no Batocera system).
var rommPlatforms = []romm.Platform{
	{ID: 1, Slug: "nes", FSSlug: "nes", Name: "Nintendo Entertainment System"},
	{ID: 3, Slug: "genesis", FSSlug: "megadrive", Name: "Sega Mega Drive/Genesis"},
	{ID: 5, Slug: "gb", FSSlug: "gb", Name: "Game Boy"},
	{ID: 6, Slug: "snes", FSSlug: "sfam", Name: "Super Famicom"},
	{ID: 7, Slug: "ios", FSSlug: "ios", Name: "iOS"},
}

func authErr(status int) error {
	return &romm.AuthError{Status: status, Version: "5.3.1"}
}

func scopeErr(scope string) error { return &romm.ScopeError{Scope: scope, Route: "GET /api/x"} }

// want is what one check must say: its status and text its detail and
// hint contain ("": anything).
type want struct {
	status       Status
	detail, hint string
}

func TestDoctorRomM(t *testing.T) {
	const url = "http://romm.lan:8080"
	good := fakeRomM{version: "5.3.1", platforms: rommPlatforms[:3]}
	withPlatforms := func(f fakeRomM, ps ...romm.Platform) fakeRomM { f.platforms = ps; return f }
	unreachable := errors.New("cannot reach RomM at http://romm.lan:8080 (connection refused): check cabinet.romm.url and that RomM is running")
	nesMegadriveGB := fakeES{systems: []string{"nes", "megadrive", "gb", "snes", "ports"}}
	tests := []struct {
		name   string
		romm   RomMEnv
		es     fakeES
		esDown bool
		want   map[string]want // by check name; a name missing from the results must be too
	}{
		{name: "not configured", romm: RomMEnv{},
			want: map[string]want{CheckRomM: {Skip, "cabinet.romm.url is not set", ""}}},
		{name: "client settings refused", romm: RomMEnv{URL: "ftp://romm", Err: errors.New("cabinet.romm.url must start with http:// or https://")},
			want: map[string]want{CheckRomM: {Fail, "must start with http://", "cabinet config"}, CheckRomMAuth: {Skip, "not reachable", ""}, CheckRomMPlatform: {Skip, "not reachable", ""}}},
		{name: "unreachable", romm: RomMEnv{URL: url, HasToken: true, Client: fakeRomM{versionErr: unreachable}},
			want: map[string]want{CheckRomM: {Fail, "cannot reach RomM", "check cabinet.romm.url (" + url + ")"}, CheckRomMAuth: {Skip, "", ""}, CheckRomMPlatform: {Skip, "", ""}}},
		{name: "all good", romm: RomMEnv{URL: url, HasToken: true, Client: good}, es: nesMegadriveGB,
			want: map[string]want{CheckRomM: {OK, "RomM 5.3.1 answers at " + url, ""},
				CheckRomMAuth:     {OK, "the token works with roms.read, platforms.read, collections.read", ""},
				CheckRomMPlatform: {OK, "3 of 3 RomM platforms map to systems ES lists", ""}}},
		{name: "4.8 is verified", romm: RomMEnv{URL: url, HasToken: true, Client: fakeRomM{version: "4.8.1", platforms: rommPlatforms[:1]}}, es: nesMegadriveGB,
			want: map[string]want{CheckRomM: {OK, "RomM 4.8.1 answers", ""}, CheckRomMAuth: {OK, "", ""}, CheckRomMPlatform: {OK, "", ""}}},
		{name: "newer than verified", romm: RomMEnv{URL: url, HasToken: true, Client: withPlatforms(fakeRomM{version: "5.4.0"}, rommPlatforms[0])}, es: nesMegadriveGB,
			want: map[string]want{CheckRomM: {Warn, "RomM 5.4.0 answers at " + url + "; the cabinet is checked against RomM 4.8 to 5.3", "best effort"},
				CheckRomMAuth: {OK, "", ""}, CheckRomMPlatform: {OK, "", ""}}},
		{name: "development build", romm: RomMEnv{URL: url, HasToken: true, Client: withPlatforms(fakeRomM{version: "development"}, rommPlatforms[0])}, es: nesMegadriveGB,
			want: map[string]want{CheckRomM: {Warn, "a development build", "best effort"}, CheckRomMAuth: {OK, "", ""}, CheckRomMPlatform: {OK, "", ""}}},
		{name: "older than client tokens", romm: RomMEnv{URL: url, HasToken: true, Client: fakeRomM{version: "4.7.2"}},
			want: map[string]want{CheckRomM: {Fail, "older than 4.8", "upgrade RomM to 4.8 or newer"}, CheckRomMAuth: {Skip, "", ""}, CheckRomMPlatform: {Skip, "", ""}}},
		{name: "older than 4.0", romm: RomMEnv{URL: url, Client: fakeRomM{version: "3.10.0"}},
			want: map[string]want{CheckRomM: {Fail, "older than 4.0", "upgrade RomM"}, CheckRomMAuth: {Skip, "", ""}, CheckRomMPlatform: {Skip, "", ""}}},
		{name: "4.7 without a token is only unverified", romm: RomMEnv{URL: url, Client: withPlatforms(fakeRomM{version: "4.7.0"}, rommPlatforms[0])}, es: nesMegadriveGB,
			want: map[string]want{CheckRomM: {Warn, "checked against RomM 4.8 to 5.3", ""}, CheckRomMAuth: {OK, "without a token (kiosk mode)", ""}, CheckRomMPlatform: {OK, "", ""}}},
		{name: "token refused", romm: RomMEnv{URL: url, HasToken: true, Client: fakeRomM{version: "5.3.1",
			scopes:       map[string]error{"roms.read": authErr(401), "platforms.read": authErr(401), "collections.read": authErr(401)},
			platformsErr: authErr(401)}}, es: nesMegadriveGB,
			want: map[string]want{CheckRomM: {OK, "", ""},
				CheckRomMAuth:     {Fail, "RomM refused the token for every read (roms.read, platforms.read, collections.read)", "roms.read, platforms.read and collections.read"},
				CheckRomMPlatform: {Skip, "the token cannot read RomM's platforms", ""}}},
		{name: "token refused, hint says where it goes", romm: RomMEnv{URL: url, HasToken: true, Client: fakeRomM{version: "5.1.0",
			scopes:       map[string]error{"roms.read": authErr(403), "platforms.read": authErr(403), "collections.read": authErr(403)},
			platformsErr: authErr(403)}}, es: nesMegadriveGB,
			want: map[string]want{CheckRomM: {OK, "", ""}, CheckRomMAuth: {Fail, "refused the token", "set cabinet.romm.token_file"}, CheckRomMPlatform: {Skip, "", ""}}},
		{name: "no token, RomM wants one", romm: RomMEnv{URL: url, Client: fakeRomM{version: "5.3.1",
			scopes:       map[string]error{"roms.read": authErr(401), "platforms.read": authErr(401), "collections.read": authErr(401)},
			platformsErr: authErr(401)}}, es: nesMegadriveGB,
			want: map[string]want{CheckRomM: {OK, "", ""}, CheckRomMAuth: {Fail, "cabinet.romm.token is empty", "Client tokens"}, CheckRomMPlatform: {Skip, "", ""}}},
		{name: "no scope at all", romm: RomMEnv{URL: url, HasToken: true, Client: fakeRomM{version: "5.3.1",
			scopes:       map[string]error{"roms.read": scopeErr("roms.read"), "platforms.read": scopeErr("platforms.read"), "collections.read": scopeErr("collections.read")},
			platformsErr: scopeErr("platforms.read")}}, es: nesMegadriveGB,
			want: map[string]want{CheckRomM: {OK, "", ""}, CheckRomMAuth: {Fail, "accepts the token, but it has none of", "collections.read"}, CheckRomMPlatform: {Skip, "", ""}}},
		{name: "no collections scope", romm: RomMEnv{URL: url, HasToken: true, Client: fakeRomM{version: "5.3.1", platforms: rommPlatforms[:1],
			scopes: map[string]error{"collections.read": scopeErr("collections.read")}}}, es: nesMegadriveGB,
			want: map[string]want{CheckRomM: {OK, "", ""},
				CheckRomMAuth:     {Warn, "the token works with roms.read, platforms.read but lacks collections.read", "the tools that need collections.read fail meanwhile"},
				CheckRomMPlatform: {OK, "", ""}}},
		{name: "no roms scope", romm: RomMEnv{URL: url, HasToken: true, Client: fakeRomM{version: "5.3.1", platforms: rommPlatforms[:1],
			scopes: map[string]error{"roms.read": scopeErr("roms.read")}}}, es: nesMegadriveGB,
			want: map[string]want{CheckRomM: {OK, "", ""}, CheckRomMAuth: {Fail, "lacks roms.read", "create a client token"}, CheckRomMPlatform: {OK, "", ""}}},
		{name: "probe fails otherwise", romm: RomMEnv{URL: url, HasToken: true, Client: fakeRomM{version: "5.3.1", platforms: rommPlatforms[:1],
			scopes: map[string]error{"roms.read": errors.New("RomM failed on GET /api/roms (500)")}}}, es: nesMegadriveGB,
			want: map[string]want{CheckRomM: {OK, "", ""}, CheckRomMAuth: {Fail, "RomM failed on GET /api/roms (500)", "RomM's log"}, CheckRomMPlatform: {OK, "", ""}}},
		{name: "platforms unmapped and not on the cabinet", romm: RomMEnv{URL: url, HasToken: true, Client: withPlatforms(good, rommPlatforms...)},
			es: fakeES{systems: []string{"nes", "snes", "megadrive"}},
			want: map[string]want{CheckRomM: {OK, "", ""}, CheckRomMAuth: {OK, "", ""},
				CheckRomMPlatform: {Warn, "3 of 5 RomM platforms map to systems ES lists; 1 to systems this cabinet has no games for (Game Boy (gb)); 1 to no Batocera folder: iOS (ios)",
					"cabinet.romm.platform_map=<romm slug>:<batocera folder>"}}},
		{name: "an override maps a platform", romm: RomMEnv{URL: url, HasToken: true, Client: withPlatforms(good, rommPlatforms...),
			Platforms: platforms.Default().WithOverrides(map[string]string{"ios": "ports"})}, es: nesMegadriveGB,
			want: map[string]want{CheckRomM: {OK, "", ""}, CheckRomMAuth: {OK, "", ""}, CheckRomMPlatform: {OK, "5 of 5 RomM platforms map", ""}}},
		{name: "ES down: mapping not checked", romm: RomMEnv{URL: url, HasToken: true, Client: good}, esDown: true,
			want: map[string]want{CheckRomM: {OK, "", ""}, CheckRomMAuth: {OK, "", ""},
				CheckRomMPlatform: {Skip, "RomM has 3 platforms; their mapping to this cabinet's systems was not checked: EmulationStation is not reachable", ""}}},
		{name: "ES fails the systems", romm: RomMEnv{URL: url, HasToken: true, Client: good}, es: fakeES{err: errors.New("ES answered 500")},
			want: map[string]want{CheckRomM: {OK, "", ""}, CheckRomMAuth: {OK, "", ""}, CheckRomMPlatform: {Skip, "not checked: ES answered 500", ""}}},
		{name: "RomM lists no platforms", romm: RomMEnv{URL: url, HasToken: true, Client: withPlatforms(good)}, es: nesMegadriveGB,
			want: map[string]want{CheckRomM: {OK, "", ""}, CheckRomMAuth: {OK, "", ""}, CheckRomMPlatform: {Warn, "RomM lists no platforms", "scan RomM's library"}}},
		{name: "platforms fail", romm: RomMEnv{URL: url, HasToken: true, Client: fakeRomM{version: "5.3.1", platformsErr: errors.New("RomM's answer to GET /api/platforms is larger than 16 MiB")}}, es: nesMegadriveGB,
			want: map[string]want{CheckRomM: {OK, "", ""}, CheckRomMAuth: {OK, "", ""}, CheckRomMPlatform: {Fail, "larger than 16 MiB", "try again"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			esStatus := OK
			if tt.esDown {
				esStatus = Fail
			}
			env := Env{RomM: tt.romm, ES: tt.es}
			checks := append([]Check{{CheckES, func(context.Context, []Result) Result { return Result{Status: esStatus} }}}, rommChecks(env)...)
			got := statuses(Run(context.Background(), checks, time.Second))
			delete(got, CheckES)
			for name := range got {
				if _, ok := tt.want[name]; !ok {
					t.Errorf("unexpected check %s: %+v", name, got[name])
				}
			}
			for name, w := range tt.want {
				r, ok := got[name]
				switch {
				case !ok:
					t.Errorf("%s: not run", name)
				case r.Status != w.status || !strings.Contains(r.Detail, w.detail) || !strings.Contains(r.Hint, w.hint):
					t.Errorf("%s = %s %q (hint %q)\nwant %s, detail containing %q, hint containing %q", name, r.Status, r.Detail, r.Hint, w.status, w.detail, w.hint)
				case (r.Status == Fail || r.Status == Warn) && r.Hint == "":
					t.Errorf("%s is %s without saying what to do: %q", name, r.Status, r.Detail)
				}
			}
		})
	}
}

// The RomM and ROMarr checks are part of the standard ones, after the
// hooks and before the daemon's (and the play time, last).
func TestDoctorLibraryServersInChecks(t *testing.T) {
	env := Env{Extra: []Check{{Name: "daemon"}}}
	var names []string
	for _, c := range Checks(env) {
		names = append(names, c.Name)
	}
	got := strings.Join(names, " ")
	if !strings.HasSuffix(got, "hooks romm romarr installs daemon playtime save-sync") {
		t.Errorf("checks = %s, want … hooks romm romarr installs daemon playtime save-sync", got)
	}
	env.RomM = RomMEnv{URL: "http://romm.lan"}
	names = nil
	for _, c := range Checks(env) {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); !strings.HasSuffix(got, "hooks romm romm-auth romm-map romarr installs daemon playtime save-sync") {
		t.Errorf("checks with RomM = %s, want … hooks romm romm-auth romm-map romarr installs daemon playtime save-sync", got)
	}
}

// fakeROMarr answers Status with st, or fails with err.
type fakeROMarr struct {
	st  romarr.Status
	err error
}

func (f fakeROMarr) Status(context.Context) (romarr.Status, error) { return f.st, f.err }

func TestDoctorROMarr(t *testing.T) {
	const url = "http://nas.lan:6868"
	st := romarr.Status{Version: "0.8.0", Platforms: 120, Wanted: 2, Indexers: 1,
		Libraries:       []romarr.Library{{Name: "RomM", Type: "romm", OK: true}},
		DownloadClients: []romarr.DownloadClient{{Name: "qBittorrent", Protocol: "torrent", OK: false, Detail: "connection refused"}}}
	tests := []struct {
		name  string
		env   ROMarrEnv
		want  want
		facts []string
	}{
		{"not configured", ROMarrEnv{}, want{Skip, "cabinet.romarr.url is not set", ""}, nil},
		{"client settings refused", ROMarrEnv{URL: "nas", Err: errors.New("cabinet.romarr.url is not an http:// or https:// address")},
			want{Fail, "not an http://", "cabinet config"}, nil},
		{"key refused", ROMarrEnv{URL: url, HasKey: true, Client: fakeROMarr{err: fmt.Errorf("romarr status: GET /api/v1/system/status: %w (401)", romarr.ErrUnauthorized)}},
			want{Fail, "ROMarr at " + url + " answers but refused the API key", "cabinet.romarr.api_key_file"}, nil},
		{"unreachable", ROMarrEnv{URL: url, HasKey: true, Client: fakeROMarr{err: errors.New("romarr status: GET /api/v1/system/status: cannot reach ROMarr at nas.lan:6868")}},
			want{Fail, "cannot reach ROMarr", "check cabinet.romarr.url (" + url + ")"}, nil},
		{"works", ROMarrEnv{URL: url, HasKey: true, Client: fakeROMarr{st: st}},
			want{OK, "ROMarr 0.8.0 answers at " + url + " and takes the API key", ""},
			[]string{"120 platforms, 2 wanted, 0 queued, 1 indexers", "library RomM (romm): answers", "download client qBittorrent (torrent): does not answer: connection refused"}},
		{"works without a key", ROMarrEnv{URL: url, Client: fakeROMarr{st: st}}, want{OK, "without an API key", ""}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := checkROMarr(context.Background(), tt.env)
			if r.Status != tt.want.status || !strings.Contains(r.Detail, tt.want.detail) || !strings.Contains(r.Hint, tt.want.hint) {
				t.Errorf("romarr = %s %q (hint %q)\nwant %s, detail containing %q, hint containing %q", r.Status, r.Detail, r.Hint, tt.want.status, tt.want.detail, tt.want.hint)
			}
			facts := strings.Join(r.Facts, "\n")
			for _, f := range tt.facts {
				if !strings.Contains(facts, f) {
					t.Errorf("facts:\n%s\nwant %q", facts, f)
				}
			}
		})
	}
}

func TestInstallsCheck(t *testing.T) {
	root := t.TempDir()
	if r := checkInstalls(root); r.Status != OK {
		t.Errorf("empty ROM folders: %+v", r)
	}
	if err := os.MkdirAll(filepath.Join(root, "snes", ".cabinet-install-romm-3", "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "snes", ".cabinet-install-romm-3", "install.json"), []byte(`{"rom_id":3}`), 0o644)
	os.WriteFile(filepath.Join(root, "snes", ".cabinet-install-romm-3", "files", "Game.sfc.cabinet-part"), make([]byte, 4096), 0o644)
	r := checkInstalls(root)
	if r.Status != Warn || !strings.Contains(r.Detail, "1 unfinished library install") || !strings.Contains(r.Hint, "rm -r") {
		t.Errorf("a leftover: %+v", r)
	}
	if r := checkInstalls(""); r.Status != Skip {
		t.Errorf("no root: %+v", r)
	}
}
