package tools

import (
	"context"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/daemon/tools/search"
)

// Completions (issue 31) of the prompts' and the games template's arguments: systems by folder or
// full name, games by batocera_find_games' matching (the top 10), moods. They read the search
// index only (built once, shared), so they answer in well under a millisecond once it is built.

// Bounds of a completion.
const (
	maxCompleteValue = 100 // characters of the value typed that are looked at
	completeGames    = 10
	completeMost     = 100 // the protocol's bound on values
)

// completer is mcp-go's PromptCompletionProvider and ResourceCompletionProvider.
type completer struct {
	cat *catalog
}

func (c completer) CompletePromptArgument(ctx context.Context, _ string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	switch arg.Name {
	case "mood":
		return prefixed(moods(), arg.Value), nil
	case "system":
		return c.systems(ctx, arg.Value)
	case "query":
		return c.games(ctx, arg.Value, cc.Arguments["system"], false)
	}
	return &mcp.Completion{Values: []string{}}, nil
}

func (c completer) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	if uri != gamesTemplate {
		return &mcp.Completion{Values: []string{}}, nil
	}
	switch arg.Name {
	case "system":
		return c.systems(ctx, arg.Value)
	case "game_id":
		return c.games(ctx, arg.Value, cc.Arguments["system"], true)
	}
	return &mcp.Completion{Values: []string{}}, nil
}

// systems are the folders of the systems with games whose folder or full name starts with value
// (case, accents and spaces ignored).
func (c completer) systems(ctx context.Context, value string) (*mcp.Completion, error) {
	if !mayRead(ctx, nil) {
		return &mcp.Completion{Values: []string{}}, nil
	}
	ix, _, err := c.cat.index(ctx)
	if err != nil {
		return nil, esFailure("read the game lists", err)
	}
	names := ix.Systems()
	fulls := c.cat.fullNames(names) // from the index's own build: no call to ES
	key := compactKey(cut(value))
	var out []string
	for _, name := range names {
		full := fulls[name]
		if strings.HasPrefix(compactKey(name), key) || full != "" && strings.HasPrefix(compactKey(full), key) {
			out = append(out, name)
		}
	}
	return bounded(out), nil
}

// games are the names (or, for ids, ES's ids) of the best matches of value, on system if given.
func (c completer) games(ctx context.Context, value, system string, ids bool) (*mcp.Completion, error) {
	if !mayRead(ctx, nil) {
		return &mcp.Completion{Values: []string{}}, nil
	}
	ix, _, err := c.cat.index(ctx)
	if err != nil {
		return nil, esFailure("read the game lists", err)
	}
	if system != "" && !slices.Contains(ix.Systems(), system) {
		system = ""
	}
	r := ix.Find(search.Query{Text: cut(value), System: system, Limit: completeGames})
	out := make([]string, 0, len(r.Hits))
	for _, h := range r.Hits {
		v := h.Name
		if ids {
			v = h.ID
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return &mcp.Completion{Values: out, Total: r.Total, HasMore: r.Total > len(out)}, nil
}

func cut(s string) string {
	if r := []rune(s); len(r) > maxCompleteValue {
		return string(r[:maxCompleteValue])
	}
	return s
}

// prefixed are the values that start with value (case ignored).
func prefixed(values []string, value string) *mcp.Completion {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, strings.ToLower(strings.TrimSpace(cut(value)))) {
			out = append(out, v)
		}
	}
	return bounded(out)
}

func bounded(values []string) *mcp.Completion {
	c := &mcp.Completion{Values: values, Total: len(values)}
	if c.Values == nil {
		c.Values = []string{}
	}
	if len(values) > completeMost {
		c.Values, c.HasMore = values[:completeMost], true
	}
	return c
}
