package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/oauth"
)

type clientsCommand struct{ env *env }

const clientsDoc = `The MCP clients signed in through OAuth (cabinet.mcp.oauth): each was
approved in a browser with the PIN the TV showed.

  list [--json]          the clients: id, name (as the client gave it: unverified),
                         where it returns after sign-in, scopes, created, when its
                         sign-in expires, last request and last token exchange
  revoke ID | --all      sign a client out (or all of them): its tokens, the access
                         tokens already issued included, stop working at their next
                         request; it can sign in again only with a new PIN
  unlock                 allow sign-in again after 20 wrong PINs in a day locked it

Registrations no sign-in followed are dropped after an hour, clients unused
for 90 days are dropped, and a sign-in lasts 30 days (refreshing does not
extend it). Bearer tokens (cabinet token) are not affected.`

func (c *clientsCommand) Run(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "clients", "list [--json] | revoke ID|--all | unlock", clientsDoc, &sets)
	all := fs.Bool("all", false, "revoke: every client")
	asJSON := fs.Bool("json", false, "list: as JSON")
	verb, _, err := parseVerb(fs, args, "clients", map[string][]string{"list": {"json"}, "revoke": {"all"}, "unlock": nil},
		"`cabinet clients list`, `revoke` or `unlock`")
	if err != nil {
		return err
	}
	l := loadConfig(c.env, sets)
	path := l.Config.Layout().OAuth()
	now := time.Now()
	switch verb {
	case "list":
		if fs.NArg() != 0 {
			return fmt.Errorf("%w: `cabinet clients list` takes no id", errUsage)
		}
		return c.list(path, now, *asJSON)
	case "unlock":
		if fs.NArg() != 0 {
			return fmt.Errorf("%w: `cabinet clients unlock` takes nothing", errUsage)
		}
		was, err := oauth.Unlock(path, now)
		if err != nil {
			return err
		}
		if was {
			fmt.Fprintln(c.env.Stderr, "sign-in is allowed again (it was locked after too many wrong PINs)")
		} else {
			fmt.Fprintln(c.env.Stderr, "sign-in was not locked; the day's wrong PINs are forgotten")
		}
		return nil
	}
	switch {
	case *all && fs.NArg() == 0:
		n, err := oauth.Revoke(path, "", now)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.env.Stderr, "signed out %d client(s): their tokens stop working at their next request\n", n)
		return nil
	case *all || fs.NArg() != 1:
		return fmt.Errorf("%w: want `cabinet clients revoke ID` or `cabinet clients revoke --all`", errUsage)
	}
	if _, err := oauth.Revoke(path, fs.Arg(0), now); err != nil {
		return err
	}
	fmt.Fprintf(c.env.Stderr, "signed out %s: its tokens stop working at their next request\n", fs.Arg(0))
	return nil
}

func (c *clientsCommand) list(path string, now time.Time, asJSON bool) error {
	clients, grants, limits, err := oauth.Clients(path, now)
	if err != nil {
		return err
	}
	lines := oauth.Summaries(clients, grants)
	if asJSON {
		enc := json.NewEncoder(c.env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(lines)
	}
	if limits.Locked {
		fmt.Fprintln(c.env.Stderr, "sign-in is LOCKED after too many wrong PINs today: `cabinet clients unlock` allows it again")
	}
	if len(lines) == 0 {
		fmt.Fprintln(c.env.Stderr, "no clients have signed in (cabinet.mcp.oauth; README: \"Connect Claude (and others) by signing in\")")
		return nil
	}
	when := func(t *time.Time) string {
		if t == nil {
			return "never"
		}
		return t.Local().Format("2006-01-02 15:04")
	}
	w := tabwriter.NewWriter(c.env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME (unverified)\tRETURNS TO\tSCOPES\tCREATED\tEXPIRES\tLAST REQUEST\tLAST TOKEN EXCHANGE")
	for _, l := range lines {
		hosts := strings.Join(l.RedirectHosts, ",")
		if hosts == "" {
			hosts = "-"
		}
		scopes := strings.Join(l.Scopes, ",")
		if scopes == "" {
			scopes = "(not signed in)"
		}
		// A signed-in client's sign-in ends first (then it needs a new PIN); an
		// unused registration is dropped at Expires.
		created, expires := l.Created, l.Expires
		if l.SignInExpires != nil {
			expires = *l.SignInExpires
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.ID, l.Name, hosts, scopes, when(&created), when(&expires), when(l.LastRequest), when(l.LastExchange))
	}
	return w.Flush()
}
