package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Prompts (issue 31): ready-made requests a client shows as slash commands (Claude Code:
// /mcp__cabinet__whats-playing). Each is one user message naming the tools (and resources) it
// relies on; a prompt whose tools this server lacks is not registered. Arguments are the user's
// own words: cleaned, capped and quoted as data.

// Moods of explore-library, in the order completions offer them.
func moods() []string {
	return []string{"surprise me", "quick session", "hidden gem", "two players", "nostalgia"}
}

// maxPromptArg caps an argument spliced into a prompt.
const maxPromptArg = 200

type promptDef struct {
	name, title, description string
	args                     []promptArg
	tools                    []string // every one must be registered for the prompt to be
	text                     func(args map[string]string) string
}

type promptArg struct {
	name, description string
	required          bool
}

// quoted is an argument as a prompt carries it: cleaned, capped, in quotes.
func quoted(s string) string { return fmt.Sprintf("%q", untrusted.Clean(s, maxPromptArg)) }

func promptDefs() []promptDef {
	return []promptDef{
		{name: "whats-playing", title: "What's playing?", description: "What the cabinet is doing right now.",
			tools: []string{"batocera_get_status"},
			text: func(map[string]string) string {
				return "Tell me what the cabinet is doing right now. Call batocera_get_status (or read the resource " +
					"cabinet://status) and answer in two or three friendly sentences: the game running and for how long, " +
					"or that it is idle; mention anything that looks wrong (EmulationStation or RetroArch not answering)."
			}},
		{name: "find-and-launch", title: "Find and launch a game", description: "Find a game by name and start it.",
			args:  []promptArg{{"query", "Words of the game's name.", true}, {"system", "Only this system (e.g. snes).", false}},
			tools: []string{"batocera_find_games", "batocera_launch_game"},
			text: func(a map[string]string) string {
				t := "Find the game " + quoted(a["query"]) + " on the cabinet with batocera_find_games"
				if a["system"] != "" {
					t += " (system " + quoted(a["system"]) + ")"
				}
				return t + ". If one game clearly matches, say which and ask me to confirm; if several do, list them " +
					"(name, system, year) and let me pick. Then start it with batocera_launch_game. If a game is already " +
					"running, tell me and ask before quitting it (batocera_quit_game loses unsaved progress)."
			}},
		{name: "explore-library", title: "Explore the library", description: "Suggest games from the cabinet's library for a mood.",
			args:  []promptArg{{"mood", "surprise me, quick session, hidden gem, two players or nostalgia.", false}},
			tools: []string{"batocera_find_games", "batocera_list_systems"},
			text: func(a map[string]string) string {
				mood := a["mood"]
				if mood == "" {
					mood = "surprise me"
				}
				return "Suggest three games from the cabinet for the mood " + quoted(mood) + ". Look at the systems " +
					"(batocera_list_systems) and the games (batocera_find_games: mode random for a surprise, players 2 for two " +
					"players, mode most_played or recent for nostalgia, games never played for a hidden gem, short arcade " +
					"games for a quick session). For each say why it fits in one sentence, then let me pick; launch it " +
					"with batocera_launch_game only once I have."
			}},
		{name: "weekly-report", title: "Weekly report", description: "What was played on the cabinet this week.",
			tools: []string{"batocera_play_history"},
			text: func(map[string]string) string {
				return "Give me this week's report for the cabinet: call batocera_play_history with since=7d (or read " +
					"cabinet://play-history/week). Say how long was played in all and per day, the top games, anything new, " +
					"and the achievements unlocked if there are any. Keep it short and friendly, like a note on the fridge."
			}},
		{name: "set-up-household", title: "Set up play time for children", description: "Walk a parent through the household's play-time rules.",
			tools: []string{"batocera_get_limits", "batocera_set_limits"},
			text: func(map[string]string) string {
				return "Help me set up play time on the cabinet for my children. First read the current rules with " +
					"batocera_get_limits and explain them simply. Then ask me, one question at a time: how many minutes a " +
					"day (and at weekends), bedtime, the warnings before the end, and what happens at the limit. Show me the " +
					"rules you would set and change them with batocera_set_limits only after I say yes."
			}},
		{name: "install-from-library", title: "Install a game from the library", description: "Find a game in the household's RomM and install it.",
			args:  []promptArg{{"query", "Words of the game's name.", true}},
			tools: []string{"library_search", "library_install"},
			text: func(a map[string]string) string {
				return "Find " + quoted(a["query"]) + " in the household's library with library_search. If the cabinet has it " +
					"already, say so. Otherwise list the matches (name, platform, size) and let me pick one, then install it " +
					"with library_install and tell me when it is ready; offer to launch it."
			}},
	}
}

// addPrompts registers the prompts whose tools names has.
func addPrompts(s *server.MCPServer, names []string) {
	for _, p := range promptDefs() {
		if !slices.ContainsFunc(p.tools, func(t string) bool { return !slices.Contains(names, t) }) {
			addPrompt(s, p)
		}
	}
}

func addPrompt(s *server.MCPServer, p promptDef) {
	opts := []mcp.PromptOption{mcp.WithPromptTitle(p.title), mcp.WithPromptDescription(p.description + " Uses " +
		strings.Join(p.tools, ", ") + ".")}
	for _, a := range p.args {
		aopts := []mcp.ArgumentOption{mcp.ArgumentDescription(a.description)}
		if a.required {
			aopts = append(aopts, mcp.RequiredArgument())
		}
		opts = append(opts, mcp.WithArgument(a.name, aopts...))
	}
	s.AddPrompt(mcp.NewPrompt(p.name, opts...), func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		for _, a := range p.args {
			if a.required && strings.TrimSpace(req.Params.Arguments[a.name]) == "" {
				return nil, server.NewHandlerError(invalidParams(fmt.Sprintf("prompt %s needs the argument %s", p.name, a.name)))
			}
		}
		return mcp.NewGetPromptResult(p.description, []mcp.PromptMessage{
			mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(p.text(req.Params.Arguments))),
		}), nil
	})
}

// invalidParams is a JSON-RPC -32602 a handler may return (server.NewHandlerError).
type invalidParams string

func (e invalidParams) Error() string { return string(e) }

func (e invalidParams) JSONRPCError() mcp.JSONRPCError {
	return mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INVALID_PARAMS, string(e), nil)
}
