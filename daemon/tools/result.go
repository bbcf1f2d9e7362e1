package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Outcomes of an action result.
const (
	outcomeDone      = "done"
	outcomeUnchanged = "unchanged"
	outcomeDryRun    = "dry_run"
)

// ActionResult is the structured result of every tool that changes
// something (mcp-tools.md, "Result of every tool that changes something").
type ActionResult struct {
	Cabinet  string   `json:"cabinet"`
	Outcome  string   `json:"outcome"`
	Detail   string   `json:"detail"`
	Sent     []string `json:"sent"`
	Warnings []string `json:"warnings"`
}

// actionResult returns cabinet's ActionResult with non-nil lists (the
// schema says arrays, never null).
func actionResult(cabinet, outcome, detail string, sent, warnings []string) ActionResult {
	if sent == nil {
		sent = []string{}
	}
	if warnings == nil {
		warnings = []string{}
	}
	return ActionResult{Cabinet: cabinet, Outcome: outcome, Detail: detail, Sent: sent, Warnings: warnings}
}

// text renders an action result as the short text clients show.
func (r ActionResult) text() string {
	var b strings.Builder
	switch r.Outcome {
	case outcomeDryRun:
		b.WriteString("Dry run, nothing was sent: ")
	case outcomeUnchanged:
		b.WriteString("Unchanged: ")
	}
	b.WriteString(r.Detail)
	for _, s := range r.Sent {
		if r.Outcome == outcomeDryRun {
			b.WriteString("\nWould send: ")
		} else {
			b.WriteString("\nSent: ")
		}
		b.WriteString(s)
	}
	for _, w := range r.Warnings {
		b.WriteString("\nWarning: ")
		b.WriteString(w)
	}
	return b.String()
}

// refusal is a failure the caller can do something about: it becomes an MCP
// tool error (isError) whose text says what to do, and a log notification
// (logging.go). Any other error a handler returns is a bug and becomes a
// protocol error.
type refusal struct {
	msg    string
	level  mcp.LoggingLevel // of the log notification; "" is a warning
	logger string           // "" is loggerCabinet
}

func (r *refusal) Error() string { return r.msg }

// refuse is a refused action: it logs a warning.
func refuse(format string, args ...any) error {
	return &refusal{msg: fmt.Sprintf(format, args...)}
}

// failedAt is a refusal because another server failed (RomM, ROMarr, the
// installer's I/O): it logs under that server's logger at level.
func failedAt(logger string, level mcp.LoggingLevel, format string, args ...any) error {
	return &refusal{msg: fmt.Sprintf(format, args...), level: level, logger: logger}
}

// logRefusal sends a refusal's log notification: the tool and its text.
func logRefusal(ctx context.Context, tool string, rf *refusal) {
	level, logger := rf.level, rf.logger
	if level == "" {
		level = mcp.LoggingLevelWarning
	}
	if logger == "" {
		logger = loggerCabinet
	}
	logTo(ctx, level, logger, tool+" refused: "+rf.msg)
}

// maxErrorRunes caps an error text; it may quote server messages.
const maxErrorRunes = 600

// texter is a structured result with its text rendering; extras adds
// content after the text (the screenshot's image).
type texter interface{ text() string }

type extraContent interface{ extras() []mcp.Content }

// typed adapts a handler with typed arguments and a typed result: arguments
// that do not bind and refusals become tool errors, the result becomes
// structured content with its text rendering.
func typed[A any, R texter](h func(ctx context.Context, a A) (R, error)) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a A
		if err := req.BindArguments(&a); err != nil {
			return invalidArguments(ctx, req.Params.Name, err), nil
		}
		r, err := h(ctx, a)
		if err != nil {
			var rf *refusal
			if errors.As(err, &rf) {
				logRefusal(ctx, req.Params.Name, rf)
				return mcp.NewToolResultError(untrusted.Clean(rf.msg, maxErrorRunes)), nil
			}
			return nil, fmt.Errorf("%s: %w", req.Params.Name, err)
		}
		res := mcp.NewToolResultStructured(r, r.text())
		if x, ok := any(r).(extraContent); ok {
			res.Content = append(res.Content, x.extras()...)
		}
		return res, nil
	}
}

// invalidArguments is the tool error of arguments that do not bind, logged
// as a refusal.
func invalidArguments(ctx context.Context, tool string, err error) *mcp.CallToolResult {
	rf := &refusal{msg: "invalid arguments: " + err.Error()}
	logRefusal(ctx, tool, rf)
	return mcp.NewToolResultError(untrusted.Clean(rf.msg, maxErrorRunes))
}

// none is the argument type of tools without arguments.
type none struct{}
