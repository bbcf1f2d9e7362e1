package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
)

type tokenCommand struct{ env *env }

func (c *tokenCommand) Run(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "token", "new|show", `Create (new) or print (show) the bearer token MCP clients on the LAN send to
http://<cabinet>:8717/mcp ("Authorization: Bearer <token>"). It is kept 0600 in
<state_dir>/token; a new one takes effect at once and the old one stops working.`, &sets)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	l := loadConfig(c.env, sets)
	path := l.Config.Layout().Token()
	var tok string
	var err error
	switch fs.Arg(0) {
	case "new":
		tok, err = httpauth.NewToken(path)
	case "show":
		tok, err = httpauth.ReadToken(path)
	default:
		return fmt.Errorf("%w: want `cabinet token new` or `cabinet token show`", errUsage)
	}
	if err != nil {
		if errors.Is(err, httpauth.ErrNoToken) {
			return fmt.Errorf("%w", err)
		}
		return err
	}
	fmt.Fprintln(c.env.Stdout, tok)
	return nil
}
