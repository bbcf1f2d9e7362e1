package requests

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/store"
)

func openTestStore(t *testing.T) Kept {
	t.Helper()
	s, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return Kept{DB: s}
}

var reqEpoch = time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)

func openRequest(i int) Request {
	at := reqEpoch.Add(time.Duration(i) * time.Minute)
	return Request{ID: at.Format("20060102T150405.000Z") + "-test", Game: fmt.Sprintf("Game %d", i), Platform: "snes", System: "snes",
		State: StatePending, CreatedAt: at, UpdatedAt: at, NextCheck: at.Add(time.Minute)}
}

func ids(list []Request) []string {
	out := make([]string, len(list))
	for i, r := range list {
		out[i] = r.Game
	}
	return out
}

func TestRequestOpen(t *testing.T) {
	next := reqEpoch.Add(time.Minute)
	tests := []struct {
		state   string
		install bool
		next    time.Time
		want    bool
	}{
		{StatePending, false, next, true},
		{StateSearching, false, next, true},
		{StateDownloading, true, next, true},
		{StateImporting, false, next, true},
		{StateImporting, false, time.Time{}, false}, // closed by the follower
		{StateInRomM, false, next, false},           // arrived, nothing more to do
		{StateInRomM, true, next, true},             // still to install
		{StateInstalled, true, next, false},
		{StateFailed, false, next, true}, // stuck in ROMarr: still watched
		{StateFailed, true, time.Time{}, false},
		{StateExpired, false, next, false},
	}
	for _, tt := range tests {
		r := Request{State: tt.state, Install: tt.install, NextCheck: tt.next}
		if got := r.Open(); got != tt.want {
			t.Errorf("%s install=%v next=%v: Open() = %v, want %v", tt.state, tt.install, tt.next, got, tt.want)
		}
	}
}

func TestRequestsRoundTripNewestFirst(t *testing.T) {
	s := openTestStore(t)
	for i := range 3 {
		if err := s.PutRequest(openRequest(i)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Requests()
	if err != nil {
		t.Fatal(err)
	}
	if want := "Game 2,Game 1,Game 0"; strings.Join(ids(got), ",") != want {
		t.Fatalf("Requests() = %v, want %s", ids(got), want)
	}
	want := openRequest(1)
	if g := got[1]; g.ID != want.ID || g.Platform != "snes" || g.System != "snes" || g.State != StatePending ||
		!g.CreatedAt.Equal(want.CreatedAt) || !g.NextCheck.Equal(want.NextCheck) {
		t.Errorf("stored %+v, want %+v", g, want)
	}
}

func TestDueRequests(t *testing.T) {
	s := openTestStore(t)
	a, b, c := openRequest(0), openRequest(1), openRequest(2)
	c.State, c.Install = StateInRomM, false // arrived: never due again
	for _, r := range []Request{b, a, c} {
		if err := s.PutRequest(r); err != nil {
			t.Fatal(err)
		}
	}
	due, err := s.DueRequests(reqEpoch)
	if err != nil || len(due) != 0 {
		t.Fatalf("due at the start: %v, %v; want none", ids(due), err)
	}
	due, _ = s.DueRequests(reqEpoch.Add(10 * time.Minute))
	if strings.Join(ids(due), ",") != "Game 0,Game 1" {
		t.Errorf("due = %v, want Game 0 then Game 1 (longest due first), not the closed one", ids(due))
	}
	if n, err := s.OpenRequests(); err != nil || n != 2 {
		t.Errorf("OpenRequests() = %d, %v; want 2", n, err)
	}
}

func TestUpdateRequest(t *testing.T) {
	s := openTestStore(t)
	r := openRequest(0)
	if err := s.PutRequest(r); err != nil {
		t.Fatal(err)
	}
	later := r.CreatedAt.Add(time.Hour)
	if err := s.UpdateRequest(r.ID, func(x *Request) error {
		x.State, x.ROMID, x.UpdatedAt, x.Detail = StateInRomM, 42, later, strings.Repeat("é", 400)
		x.ID = "ignored"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Requests()
	if len(got) != 1 || got[0].ID != r.ID || got[0].State != StateInRomM || got[0].ROMID != 42 || !got[0].UpdatedAt.Equal(later) {
		t.Fatalf("after update: %+v", got)
	}
	if n := len([]rune(got[0].Detail)); n != maxRequestDetail {
		t.Errorf("detail kept %d runes, want the cap %d", n, maxRequestDetail)
	}
	boom := errors.New("boom")
	if err := s.UpdateRequest(r.ID, func(x *Request) error { x.State = StateFailed; return boom }); !errors.Is(err, boom) {
		t.Errorf("UpdateRequest with a failing fn: %v, want boom", err)
	}
	if got, _ := s.Requests(); got[0].State != StateInRomM {
		t.Errorf("a failed update changed the record: %+v", got[0])
	}
	if err := s.UpdateRequest("nope", func(*Request) error { return nil }); !errors.Is(err, ErrNoRequest) {
		t.Errorf("UpdateRequest of an unknown id: %v, want ErrNoRequest", err)
	}
}

func TestPutRequestRefusesBadRecords(t *testing.T) {
	s := openTestStore(t)
	for name, r := range map[string]Request{
		"no id":      {Game: "x", State: StatePending},
		"long id":    {ID: strings.Repeat("x", 65), Game: "x", State: StatePending},
		"no game":    {ID: "a", State: StatePending},
		"bad state":  {ID: "a", Game: "x", State: "done"},
		"state case": {ID: "a", Game: "x", State: "Pending"},
	} {
		if err := s.PutRequest(r); err == nil {
			t.Errorf("%s: PutRequest(%+v) succeeded", name, r)
		}
	}
}

func TestOpenRequestsAreBounded(t *testing.T) {
	s := openTestStore(t)
	for i := range MaxOpen {
		if err := s.PutRequest(openRequest(i)); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	err := s.PutRequest(openRequest(MaxOpen))
	if !errors.Is(err, ErrTooMany) || !strings.Contains(err.Error(), "200") || !strings.Contains(err.Error(), "library_requests") {
		t.Fatalf("request %d: %v, want ErrTooMany saying the bound and where to look", MaxOpen, err)
	}
	// Replacing an open one is no new request.
	again := openRequest(5)
	again.State = StateDownloading
	if err := s.PutRequest(again); err != nil {
		t.Fatalf("replace an open request at the bound: %v", err)
	}
	// Once one closes there is room again.
	if err := s.UpdateRequest(openRequest(0).ID, func(r *Request) error {
		r.State, r.NextCheck = StateExpired, time.Time{}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRequest(openRequest(MaxOpen)); err != nil {
		t.Fatalf("after one expired: %v", err)
	}
	// A closed record is always accepted.
	closed := openRequest(MaxOpen + 1)
	closed.State = StateInstalled
	if err := s.PutRequest(closed); err != nil {
		t.Errorf("a closed record at the bound: %v", err)
	}
}

func TestClosedRequestsArePruned(t *testing.T) {
	s := openTestStore(t)
	n := maxClosedRequests + 20
	for i := range n {
		r := openRequest(i)
		r.State, r.NextCheck = StateInstalled, time.Time{}
		if err := s.PutRequest(r); err != nil {
			t.Fatal(err)
		}
	}
	open := openRequest(n) // an open one is never pruned, however many close
	open.CreatedAt = reqEpoch.Add(-time.Hour)
	if err := s.PutRequest(open); err != nil {
		t.Fatal(err)
	}
	got, err := s.Requests()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != maxClosedRequests+1 {
		t.Fatalf("kept %d requests, want %d closed and the open one", len(got), maxClosedRequests)
	}
	if got[0].Game != fmt.Sprintf("Game %d", n-1) || got[len(got)-1].Game != open.Game {
		t.Errorf("kept newest %s … oldest %s; want the newest closed ones and the open one", got[0].Game, got[len(got)-1].Game)
	}
	for _, r := range got {
		if r.Game == "Game 0" {
			t.Error("the oldest closed request was kept")
		}
	}
}

func TestNewRequestIDSortsByTime(t *testing.T) {
	a, b := NewID(reqEpoch), NewID(reqEpoch.Add(time.Millisecond))
	if a >= b || len(a) > maxRequestID || !strings.HasPrefix(a, "20261201T200000.000Z-") {
		t.Errorf("ids %q, %q: want time-ordered, short, starting with the UTC time", a, b)
	}
	if NewID(reqEpoch) == a {
		t.Error("two ids at the same instant are equal")
	}
}
