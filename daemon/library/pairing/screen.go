package pairing

import (
	"context"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
)

// Screen shows one line of text on the cabinet's screen for a few seconds.
type Screen interface {
	Show(ctx context.Context, text string) error
}

// Notifier is what CabinetScreen uses of EmulationStation (*es.Client implements it).
type Notifier interface {
	Notify(ctx context.Context, text string) error
	RunningGame(ctx context.Context) (*es.Game, error)
}

// OSD is what CabinetScreen uses of RetroArch (*retroarch.Client implements it).
type OSD interface {
	Version(ctx context.Context) (string, error)
	ShowMessage(ctx context.Context, text string) error
}

// DefaultShowTimeout bounds one Show.
const DefaultShowTimeout = 3 * time.Second

// CabinetScreen shows text as an ES notification (a toast: ES has no way to close a popup, and
// /messagebox waits until a game ends) or, while a game runs and RetroArch answers, as RetroArch's
// on-screen message, which is what the player sees then.
type CabinetScreen struct {
	ES        Notifier
	RetroArch OSD           // nil: ES only
	Timeout   time.Duration // per Show; 0 means DefaultShowTimeout
}

// Show picks the target for this moment: a game can start or end while pairing waits.
func (s CabinetScreen) Show(ctx context.Context, text string) error {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultShowTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if s.RetroArch != nil {
		// ES not answering is no reason to skip RetroArch: it may be the one showing a game.
		g, err := s.ES.RunningGame(ctx)
		if err != nil || g != nil {
			if _, err := s.RetroArch.Version(ctx); err == nil {
				return s.RetroArch.ShowMessage(ctx, text)
			}
		}
	}
	return s.ES.Notify(ctx, text)
}
