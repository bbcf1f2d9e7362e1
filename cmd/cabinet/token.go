package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
)

type tokenCommand struct{ env *env }

const tokenDoc = `Manage the bearer tokens MCP clients on the LAN send to
http://<cabinet>:8717/mcp ("Authorization: Bearer <token>").

  new                    replace the default token and print it (scopes read play library)
  new --name NAME [--scope read,play,...]
                         make (or replace) a named token and print it, once: it is kept
                         only as a hash (default scopes: read play)
  show                   print the default token
  list [--json]          the tokens: name, scopes, created, last used and from where
  revoke NAME | --all    remove a token (or all of them, the default one too)

Scopes: read (status, games, history, library), play (launch, quit, pause,
save states, messages, volume, screenshots), library (request and install
games), power (restart, reboot, shut down), household (limits, UI mode).
power and household are given only by an explicit --scope. A call outside a
token's scopes is refused with the command that grants it; changes take
effect at the next request. The default token is kept 0600 in
<state_dir>/token, named ones in <state_dir>/tokens.json.`

func (c *tokenCommand) Run(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "token", "new [--name NAME] [--scope LIST] | show | list | revoke NAME|--all", tokenDoc, &sets)
	name := fs.String("name", "", "new: the token's name (a-z, 0-9, _ and -, at most 32)")
	scope := fs.String("scope", "", "new --name: its scopes, comma-separated (read,play,library,power,household)")
	all := fs.Bool("all", false, "revoke: every token, the default one too")
	asJSON := fs.Bool("json", false, "list: as JSON")
	// Flags may come after the verb too (cabinet token new --name laptop).
	verb, set, err := parseVerb(fs, args, "token", map[string][]string{"new": {"name", "scope"}, "show": nil, "list": {"json"}, "revoke": {"all"}},
		"`cabinet token new`, `show`, `list` or `revoke`")
	if err != nil {
		return err
	}
	l := loadConfig(c.env, sets)
	st := httpauth.NewStore(l.Config.Layout().Token())
	switch verb {
	case "new":
		return c.create(st, *name, *scope, set["scope"], fs.Args())
	case "show":
		if fs.NArg() != 0 {
			return fmt.Errorf("%w: `cabinet token show` prints the default token; a named one is shown only when it is made", errUsage)
		}
		tok, err := httpauth.ReadToken(st.DefaultPath)
		if err != nil {
			return err
		}
		fmt.Fprintln(c.env.Stdout, tok)
		return nil
	case "list":
		if fs.NArg() != 0 {
			return fmt.Errorf("%w: `cabinet token list` takes no name", errUsage)
		}
		return c.list(st, *asJSON)
	default:
		return c.revoke(st, *all, fs.Args())
	}
}

func (c *tokenCommand) create(st *httpauth.Store, name, scopeList string, scopeSet bool, rest []string) error {
	if len(rest) != 0 {
		return fmt.Errorf("%w: `cabinet token new` takes --name NAME, not %q", errUsage, strings.Join(rest, " "))
	}
	var scopes []string
	if scopeSet {
		var err error
		if scopes, err = httpauth.ParseScopes(scopeList); err != nil {
			return fmt.Errorf("%w: --scope: %v", errUsage, err)
		}
	}
	if name == "" {
		if scopeSet {
			return fmt.Errorf("%w: --scope needs --name: the default token's scopes are %s", errUsage, strings.Join(httpauth.DefaultTokenScopes, ","))
		}
		name = httpauth.DefaultName
	}
	if err := httpauth.ValidName(name); err != nil {
		return fmt.Errorf("%w: --name: %v", errUsage, err)
	}
	tok, replaced, err := st.Create(name, scopes)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.env.Stdout, tok)
	if name == httpauth.DefaultName {
		if replaced {
			fmt.Fprintln(c.env.Stderr, "made a new default token; the old one stops working at its next request (`cabinet token show` prints it again)")
		}
		return nil
	}
	if scopes == nil {
		scopes = httpauth.NewTokenScopes
	}
	what := "made"
	if replaced {
		what = "replaced"
	}
	fmt.Fprintf(c.env.Stderr, "%s the token %s (scopes %s); it is shown only now: copy it into the MCP client\n", what, name, strings.Join(scopes, ","))
	return nil
}

// tokenLine is one token in `cabinet token list --json`.
type tokenLine struct {
	Name     string     `json:"name"`
	Scopes   []string   `json:"scopes"`
	Created  time.Time  `json:"created,omitzero"`
	LastUsed *time.Time `json:"last_used"`
	LastAddr string     `json:"last_addr,omitempty"`
}

func (c *tokenCommand) list(st *httpauth.Store, asJSON bool) error {
	infos, err := st.List()
	if err != nil {
		return err
	}
	if asJSON {
		lines := make([]tokenLine, 0, len(infos))
		for _, i := range infos {
			l := tokenLine{Name: i.Name, Scopes: i.Scopes, Created: i.Created, LastAddr: i.LastAddr}
			if !i.LastUsed.IsZero() {
				l.LastUsed = &i.LastUsed
			}
			lines = append(lines, l)
		}
		enc := json.NewEncoder(c.env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(lines)
	}
	if len(infos) == 0 {
		fmt.Fprintln(c.env.Stderr, "no tokens: `cabinet token new` makes the default one")
		return nil
	}
	w := tabwriter.NewWriter(c.env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tSCOPES\tCREATED\tLAST USED\tFROM")
	for _, i := range infos {
		used, from := "never", "-"
		if !i.LastUsed.IsZero() {
			used = i.LastUsed.Local().Format("2006-01-02 15:04")
		}
		if i.LastAddr != "" {
			from = i.LastAddr
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", i.Name, strings.Join(i.Scopes, ","), i.Created.Local().Format("2006-01-02 15:04"), used, from)
	}
	return w.Flush()
}

func (c *tokenCommand) revoke(st *httpauth.Store, all bool, rest []string) error {
	names := rest
	switch {
	case all && len(names) == 0:
		n, err := st.RevokeAll()
		if err != nil {
			return err
		}
		fmt.Fprintf(c.env.Stderr, "revoked %d token(s), the default one too; `cabinet token new` makes a new default token (the daemon makes one when it next starts)\n", n)
		return nil
	case all || len(names) != 1:
		return fmt.Errorf("%w: want `cabinet token revoke NAME` or `cabinet token revoke --all`", errUsage)
	}
	if err := st.Revoke(names[0]); err != nil {
		return err
	}
	hint := ""
	if names[0] == httpauth.DefaultName {
		hint = "; `cabinet token new` makes a new default token (the daemon makes one when it next starts)"
	}
	fmt.Fprintf(c.env.Stderr, "revoked %s: it stops working at its next request%s\n", names[0], hint)
	return nil
}
