package pairing

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/es"
)

type fakeES struct {
	game    *es.Game
	gameErr error
	shown   []string
}

func (f *fakeES) Notify(ctx context.Context, text string) error {
	f.shown = append(f.shown, text)
	return nil
}

func (f *fakeES) RunningGame(ctx context.Context) (*es.Game, error) { return f.game, f.gameErr }

type fakeRA struct {
	down  bool
	shown []string
}

func (f *fakeRA) Version(ctx context.Context) (string, error) {
	if f.down {
		return "", errors.New("nothing listens")
	}
	return "1.19.1", nil
}

func (f *fakeRA) ShowMessage(ctx context.Context, text string) error {
	f.shown = append(f.shown, text)
	return nil
}

func TestCabinetScreen(t *testing.T) {
	game := &es.Game{Name: "Alpha Quest"}
	tests := []struct {
		name      string
		game      *es.Game
		gameErr   error
		noRA      bool
		raDown    bool
		wantES    bool
		wantRetro bool
	}{
		{name: "menu", wantES: true},
		{name: "game, RetroArch answers", game: game, wantRetro: true},
		{name: "game, RetroArch silent (another emulator)", game: game, raDown: true, wantES: true},
		{name: "game, no RetroArch configured", game: game, noRA: true, wantES: true},
		{name: "ES silent, RetroArch answers", gameErr: errors.New("ES down"), wantRetro: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ra := &fakeES{game: tt.game, gameErr: tt.gameErr}, &fakeRA{down: tt.raDown}
			s := CabinetScreen{ES: e}
			if !tt.noRA {
				s.RetroArch = ra
			}
			if err := s.Show(context.Background(), "hello"); err != nil {
				t.Fatal(err)
			}
			var wantES, wantRA []string
			if tt.wantES {
				wantES = []string{"hello"}
			}
			if tt.wantRetro {
				wantRA = []string{"hello"}
			}
			if !reflect.DeepEqual(e.shown, wantES) || !reflect.DeepEqual(ra.shown, wantRA) {
				t.Errorf("ES showed %q, RetroArch %q; want %q, %q", e.shown, ra.shown, wantES, wantRA)
			}
		})
	}
}
