package doctor

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realromarr"
)

// TestDoctorAgainstRealROMarr runs the ROMarr check against the real
// ROMarr (its library the fake RomM): the right key passes and names the
// library, a wrong one fails saying which key to set, and neither key
// shows in what doctor prints.
func TestDoctorAgainstRealROMarr(t *testing.T) {
	t.Parallel()
	rm := httptest.NewServer(&fakeromm.Server{})
	defer rm.Close()
	srv := realromarr.Start(t, realromarr.Options{RommURL: rm.URL, RommToken: fakeromm.DefaultToken})
	const wrong = "not-the-key-0123456789"
	for _, tt := range []struct {
		name, key, detail, hint string
		status                  Status
	}{
		{"right key", srv.APIKey(), "and takes the API key", "", OK},
		{"wrong key", wrong, "answers but refused the API key", "cabinet.romarr.api_key_file", Fail},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := romarr.New(romarr.Config{URL: srv.URL(), APIKey: tt.key, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			rep := Run(context.Background(), []Check{{CheckROMarr, func(ctx context.Context, _ []Result) Result {
				return checkROMarr(ctx, ROMarrEnv{URL: srv.URL(), Client: c, HasKey: true})
			}}}, 10*time.Second)
			r := rep.Results[0]
			if r.Status != tt.status || !strings.Contains(r.Detail, tt.detail) || !strings.Contains(r.Hint, tt.hint) {
				t.Errorf("romarr = %s %q (hint %q), want %s with %q, hint %q", r.Status, r.Detail, r.Hint, tt.status, tt.detail, tt.hint)
			}
			var out strings.Builder
			rep.Write(&out, true)
			rep.WriteJSON(&out)
			if strings.Contains(out.String(), srv.APIKey()) || strings.Contains(out.String(), wrong) || strings.Contains(out.String(), fakeromm.DefaultToken) {
				t.Errorf("doctor shows a key:\n%s", out.String())
			}
			if tt.status == OK && !strings.Contains(strings.Join(r.Facts, "\n"), "(romm): answers") {
				t.Errorf("facts %q do not show ROMarr's RomM library answering", r.Facts)
			}
		})
	}
}
