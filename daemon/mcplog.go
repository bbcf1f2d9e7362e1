package daemon

import (
	"context"
	"log/slog"

	"github.com/rs/zerolog"
)

// mcpLog hands mcp-go's log (a slog.Logger) to the daemon's: its routine lines ("Delivered
// sampling response" for every answer a client gives) at debug, its warnings and errors as
// warnings, under "mcp".
func mcpLog(l zerolog.Logger) *slog.Logger {
	return slog.New(slogZerolog{l: l.With().Str("from", "mcp-go").Logger()})
}

type slogZerolog struct {
	l     zerolog.Logger
	attrs []slog.Attr
}

func (h slogZerolog) Enabled(context.Context, slog.Level) bool { return true }

func (h slogZerolog) Handle(_ context.Context, r slog.Record) error {
	ev := h.l.Debug()
	if r.Level >= slog.LevelWarn {
		ev = h.l.Warn()
	}
	add := func(a slog.Attr) bool {
		ev = ev.Str(a.Key, a.Value.String())
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	ev.Msg(r.Message)
	return nil
}

func (h slogZerolog) WithAttrs(as []slog.Attr) slog.Handler {
	return slogZerolog{l: h.l, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h slogZerolog) WithGroup(string) slog.Handler { return h }
