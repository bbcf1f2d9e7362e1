package main

import (
	"context"
	"fmt"
)

// pending is a subcommand whose feature is still being built: it answers -h
// and otherwise says which issue brings it.
type pending struct {
	env             *env
	name, args, doc string
	issue           int
}

func (p *pending) Run(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(p.env, p.name, p.args, p.doc, &sets)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return fmt.Errorf("not in this build yet (issue %d)", p.issue)
}

type mcpCommand struct{ env *env }

func (c *mcpCommand) Run(ctx context.Context, args []string) error {
	return (&pending{c.env, "mcp", "", "Serve MCP over stdio.", 5}).Run(ctx, args)
}

type callCommand struct{ env *env }

func (c *callCommand) Run(ctx context.Context, args []string) error {
	return (&pending{c.env, "call", "[--dry-run] TOOL key=value...", "Call one MCP tool.", 5}).Run(ctx, args)
}
