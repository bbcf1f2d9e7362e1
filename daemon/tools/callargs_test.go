package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func toolDef(t testing.TB, name string) mcp.Tool {
	t.Helper()
	for _, st := range buildToolset(newWiring(Deps{History: stubHistory{}, Household: newFakeHousehold(nil)}, Options{})).registered(false) {
		if st.Tool.Name == name {
			return st.Tool
		}
	}
	t.Fatalf("no tool %s", name)
	return mcp.Tool{}
}

func TestParseCallArgs(t *testing.T) {
	id := strings.Repeat("ab", 16)
	tests := []struct {
		tool string
		kvs  []string
		want string // JSON of the arguments, or "error: <part of the message>"
	}{
		{"batocera_find_games", nil, `{}`},
		{"batocera_find_games", []string{"query=super mario", "limit=5", "players=2", "mode=favorites"},
			`{"limit":5,"mode":"favorites","players":2,"query":"super mario"}`},
		{"batocera_find_games", []string{"query=a=b"}, `{"query":"a=b"}`},
		{"batocera_find_games", []string{"query="}, `{"query":""}`},
		{"batocera_find_games", []string{"limit=0"}, "error: argument limit must be a whole number from 1 to 100, got \"0\""},
		{"batocera_find_games", []string{"limit=2.5"}, "error: argument limit must be a whole number from 1 to 100"},
		{"batocera_find_games", []string{"limit= 7 "}, `{"limit":7}`},
		{"batocera_find_games", []string{"mode=best"}, "error: argument mode must be one of search, favorites, most_played, most_time, recent, random"},
		{"batocera_find_games", []string{"sort=name"}, "error: unknown argument \"sort\"; it takes genre, limit, mode, offset, players, query, system"},
		{"batocera_find_games", []string{"limit"}, "error: argument \"limit\" is not key=value"},
		{"batocera_find_games", []string{"limit=1", "limit=2"}, "error: argument \"limit\" is given twice"},
		{"batocera_find_games", []string{"system=../quit"}, "error: argument system must be text of at most 64 characters"},
		{"batocera_find_games", []string{"query=" + strings.Repeat("x", 201)}, "error: argument query must be text of at most 200"},
		{"batocera_launch_game", []string{"system=nes", "game_id=" + id}, `{"game_id":"` + id + `","system":"nes"}`},
		{"batocera_launch_game", []string{"system=nes"}, "error: missing argument game_id"},
		{"batocera_launch_game", []string{"system=nes", "game_id=/userdata/roms/nes/x.nes"}, "error: argument game_id must be"},
		{"batocera_pause_game", []string{"paused=yes"}, `{"paused":true}`},
		{"batocera_pause_game", []string{"paused=OFF"}, `{"paused":false}`},
		{"batocera_pause_game", []string{"paused=maybe"}, "error: argument paused must be true or false"},
		{"batocera_get_status", []string{"x=1"}, "error: unknown argument \"x\"; this tool takes no arguments"},
		{"batocera_show_message", []string{"text=Hello world ✓", "target=popup"}, `{"target":"popup","text":"Hello world ✓"}`},
		{"batocera_show_message", []string{"text=\xff"}, "error: argument \"text=\\xff\" is not valid UTF-8"},
		{"batocera_adjust_volume", []string{"action=loud"}, "error: argument action must be one of up, down, mute"},
		{"batocera_set_limits", []string{"warn_at=15, 5,1", "daily_minutes=-1", "bedtime=21:00-07:00"},
			`{"bedtime":"21:00-07:00","daily_minutes":-1,"warn_at":[15,5,1]}`},
		{"batocera_set_limits", []string{"warn_at="}, `{"warn_at":[]}`},
		{"batocera_set_limits", []string{"warn_at=0"}, "error: argument warn_at must be a comma-separated list of a whole number from 1 to 120 (at most 6)"},
		{"batocera_set_limits", []string{"warn_at=1,2,3,4,5,6,7"}, "error: argument warn_at must be a comma-separated list"},
		{"batocera_set_limits", []string{"warn_at=5,x"}, "error: argument warn_at must be"},
		{"batocera_set_limits", []string{"weekday_minutes=sat:120, sun:-1"}, `{"weekday_minutes":{"sat":120,"sun":-1}}`},
		{"batocera_set_limits", []string{"weekday_minutes=sat:2000"}, "error: argument weekday_minutes.sat must be a whole number from -1 to 1440"},
		{"batocera_set_limits", []string{"weekday_minutes=xyz:5"}, "error: argument weekday_minutes must be comma-separated name:value pairs, names fri, mon, sat, sun, thu, tue, wed"},
		{"batocera_set_limits", []string{"weekday_minutes=sat"}, "error: argument weekday_minutes must be comma-separated name:value pairs"},
		{"batocera_set_limits", []string{"weekday_minutes=sat:1,sat:2"}, "error: argument weekday_minutes gives sat twice"},
		{"batocera_set_limits", []string{"at_limit=save_quit", "enabled=on"}, `{"at_limit":"save_quit","enabled":true}`},
		{"batocera_grant_time", []string{"minutes=15"}, `{"minutes":15}`},
		{"batocera_grant_time", []string{"minutes=241"}, "error: argument minutes must be a whole number from 1 to 240"},
		{"batocera_grant_time", nil, "error: missing argument minutes"},
		{"batocera_pause_play", []string{"paused=yes"}, `{"paused":true}`},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %q", tt.tool, tt.kvs), func(t *testing.T) {
			got, err := ParseCallArgs(toolDef(t, tt.tool), tt.kvs)
			if want, isErr := strings.CutPrefix(tt.want, "error: "); isErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("got %v, %v; want an error containing %q", got, err, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want %s", err, tt.want)
			}
			if b, _ := json.Marshal(got); string(b) != tt.want {
				t.Errorf("got %s, want %s", b, tt.want)
			}
		})
	}
	many := make([]string, maxCallArgs+1)
	for i := range many {
		many[i] = "query=x"
	}
	if _, err := ParseCallArgs(toolDef(t, "batocera_find_games"), many); err == nil || !strings.Contains(err.Error(), "too many") {
		t.Errorf("too many arguments: got %v", err)
	}
}

// TestParseCallArgsAgainstTheServer parses with the definitions a client
// receives over the wire and calls the tools with the result: what the
// parser accepts, the server accepts.
func TestParseCallArgsAgainstTheServer(t *testing.T) {
	r := newRig(t, rigConfig{opts: Options{DryRun: true}})
	list, err := r.client.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	wire := map[string]mcp.Tool{}
	for _, tl := range list.Tools {
		wire[tl.Name] = tl
	}
	zelda := r.game("nes", "The Legend of Zelda")
	for _, tc := range []struct {
		tool string
		kvs  []string
	}{
		{"batocera_find_games", []string{"query=zelda", "limit=1", "offset=0", "players=1", "genre=adventure", "system=nes"}},
		{"batocera_get_game", []string{"system=nes", "game_id=" + zelda.ID}},
		{"batocera_launch_game", []string{"system=nes", "game_id=" + zelda.ID}},
		{"batocera_show_message", []string{"text=hi there", "target=notification"}},
		{"batocera_change_save_slot", []string{"direction=previous"}},
	} {
		args, err := ParseCallArgs(wire[tc.tool], tc.kvs)
		if err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		if res := r.call(tc.tool, args); res.IsError && strings.Contains(text(res), "schema") {
			t.Errorf("%s %v: the server refused what the parser accepted: %s", tc.tool, args, text(res))
		}
	}
	if _, err := ParseCallArgs(wire["batocera_find_games"], []string{"limit=500"}); err == nil {
		t.Error("wire definition: limit=500 accepted")
	}
}

// FuzzParseCallArgs: whatever the parser accepts has the schema's shape.
func FuzzParseCallArgs(f *testing.F) {
	f.Add("batocera_find_games", "query=mario\x00limit=5\x00mode=random")
	f.Add("batocera_launch_game", "system=nes\x00game_id=0123456789abcdef0123456789abcdef")
	f.Add("batocera_pause_game", "paused=yes")
	f.Add("batocera_show_message", "text=hé\x00target=game")
	f.Add("batocera_play_history", "since=7d\x00limit=100")
	f.Add("batocera_find_games", "offset=-0\x00players=+3")
	names := map[string]mcp.Tool{}
	for _, st := range buildToolset(newWiring(Deps{History: stubHistory{}, Household: newFakeHousehold(nil)}, Options{})).registered(false) {
		names[st.Tool.Name] = st.Tool
	}
	f.Fuzz(func(t *testing.T, tool, joined string) {
		tl, ok := names[tool]
		if !ok {
			return
		}
		args, err := ParseCallArgs(tl, strings.Split(joined, "\x00"))
		if err != nil {
			return
		}
		props, required, _ := inputProps(tl)
		for _, r := range required {
			if _, ok := args[r]; !ok {
				t.Fatalf("accepted without required %s: %v", r, args)
			}
		}
		for k, v := range args {
			p, ok := props[k]
			if !ok {
				t.Fatalf("accepted unknown key %q", k)
			}
			switch schemaType(p) {
			case "integer":
				n, ok := v.(int64)
				if !ok || !inBounds(float64(n), p) {
					t.Fatalf("%s=%v (%T) out of schema", k, v, v)
				}
			case "boolean":
				if _, ok := v.(bool); !ok {
					t.Fatalf("%s=%v (%T) not a bool", k, v, v)
				}
			case "string":
				s, ok := v.(string)
				if !ok {
					t.Fatalf("%s=%v (%T) not a string", k, v, v)
				}
				if e := enumOf(p); e != nil && !strings.Contains(","+strings.Join(e, ",")+",", ","+s+",") {
					t.Fatalf("%s=%q not in %v", k, s, e)
				}
				if hi, ok := bound(p, "maxLength"); ok && float64(len([]rune(s))) > hi {
					t.Fatalf("%s of %d runes, max %v", k, len([]rune(s)), hi)
				}
			}
		}
	})
}
