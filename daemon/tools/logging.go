package tools

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Log notifications (notifications/message) tell the user watching a
// client's log what a call is doing or why it failed: an install's phases
// (info), a refused action (warning), RomM's, ROMarr's or an install's
// failure (error). They add nothing the result does not say; the result is
// the answer.
//
// mcp-go decides what reaches the client, in both protocol eras:
//
//   - 2025-11-25 and earlier: the level the session set with
//     logging/setLevel, error until it sets one;
//   - 2026-07-28: the level the request itself carried in _meta
//     (io.modelcontextprotocol/logLevel); a request without one gets no log
//     notification at all (SEP-2575).
//
// Every message is cleaned and capped: it may quote a server. Secrets never
// reach one: the RomM and ROMarr clients' errors leave their token and key
// out, and nothing else logged carries them.
//
// Over Streamable HTTP, mcp-go v1.2.1 can drop a notification sent just
// before the result (its POST stream's forwarder races the response when no
// event store is configured), so a refusal's line, the last of a call, may
// not arrive there; stdio and in-process clients get every line.

// Loggers: the logger field of a notification, what it is about.
const (
	loggerCabinet = "cabinet" // the cabinet's own tools: refused actions
	loggerInstall = "install" // library_install's phases and failures
	loggerRomM    = "romm"
	loggerROMarr  = "romarr"
)

// maxLogRunes caps a log message.
const maxLogRunes = maxErrorRunes

// logTo sends msg at level under logger to the client of ctx's request, if
// the level the client asked for lets it through. Sending is best effort: a
// log line never fails a call.
func logTo(ctx context.Context, level mcp.LoggingLevel, logger, msg string) {
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return
	}
	_ = srv.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(level, logger, untrusted.Clean(msg, maxLogRunes)))
}
