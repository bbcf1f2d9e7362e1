package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func openTestStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "cabinet.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var reqEpoch = time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)

func openRequest(i int) Request {
	at := reqEpoch.Add(time.Duration(i) * time.Minute)
	return Request{ID: at.Format("20060102T150405.000Z") + "-test", Game: fmt.Sprintf("Game %d", i), Platform: "snes", System: "snes",
		State: RequestPending, CreatedAt: at, UpdatedAt: at, NextCheck: at.Add(time.Minute)}
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
		{RequestPending, false, next, true},
		{RequestSearching, false, next, true},
		{RequestDownloading, true, next, true},
		{RequestImporting, false, next, true},
		{RequestImporting, false, time.Time{}, false}, // closed by the follower
		{RequestInRomM, false, next, false},           // arrived, nothing more to do
		{RequestInRomM, true, next, true},             // still to install
		{RequestInstalled, true, next, false},
		{RequestFailed, false, next, true}, // stuck in ROMarr: still watched
		{RequestFailed, true, time.Time{}, false},
		{RequestExpired, false, next, false},
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
	if g := got[1]; g.ID != want.ID || g.Platform != "snes" || g.System != "snes" || g.State != RequestPending ||
		!g.CreatedAt.Equal(want.CreatedAt) || !g.NextCheck.Equal(want.NextCheck) {
		t.Errorf("stored %+v, want %+v", g, want)
	}
}

func TestDueRequests(t *testing.T) {
	s := openTestStore(t)
	a, b, c := openRequest(0), openRequest(1), openRequest(2)
	c.State, c.Install = RequestInRomM, false // arrived: never due again
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
		x.State, x.ROMID, x.UpdatedAt, x.Detail = RequestInRomM, 42, later, strings.Repeat("é", 400)
		x.ID = "ignored"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Requests()
	if len(got) != 1 || got[0].ID != r.ID || got[0].State != RequestInRomM || got[0].ROMID != 42 || !got[0].UpdatedAt.Equal(later) {
		t.Fatalf("after update: %+v", got)
	}
	if n := len([]rune(got[0].Detail)); n != maxRequestDetail {
		t.Errorf("detail kept %d runes, want the cap %d", n, maxRequestDetail)
	}
	boom := errors.New("boom")
	if err := s.UpdateRequest(r.ID, func(x *Request) error { x.State = RequestFailed; return boom }); !errors.Is(err, boom) {
		t.Errorf("UpdateRequest with a failing fn: %v, want boom", err)
	}
	if got, _ := s.Requests(); got[0].State != RequestInRomM {
		t.Errorf("a failed update changed the record: %+v", got[0])
	}
	if err := s.UpdateRequest("nope", func(*Request) error { return nil }); !errors.Is(err, ErrNoRequest) {
		t.Errorf("UpdateRequest of an unknown id: %v, want ErrNoRequest", err)
	}
}

func TestPutRequestRefusesBadRecords(t *testing.T) {
	s := openTestStore(t)
	for name, r := range map[string]Request{
		"no id":      {Game: "x", State: RequestPending},
		"long id":    {ID: strings.Repeat("x", 65), Game: "x", State: RequestPending},
		"no game":    {ID: "a", State: RequestPending},
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
	for i := range MaxOpenRequests {
		if err := s.PutRequest(openRequest(i)); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	err := s.PutRequest(openRequest(MaxOpenRequests))
	if !errors.Is(err, ErrTooManyRequests) || !strings.Contains(err.Error(), "200") || !strings.Contains(err.Error(), "library_requests") {
		t.Fatalf("request %d: %v, want ErrTooManyRequests saying the bound and where to look", MaxOpenRequests, err)
	}
	// Replacing an open one is no new request.
	again := openRequest(5)
	again.State = RequestDownloading
	if err := s.PutRequest(again); err != nil {
		t.Fatalf("replace an open request at the bound: %v", err)
	}
	// Once one closes there is room again.
	if err := s.UpdateRequest(openRequest(0).ID, func(r *Request) error {
		r.State, r.NextCheck = RequestExpired, time.Time{}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutRequest(openRequest(MaxOpenRequests)); err != nil {
		t.Fatalf("after one expired: %v", err)
	}
	// A closed record is always accepted.
	closed := openRequest(MaxOpenRequests + 1)
	closed.State = RequestInstalled
	if err := s.PutRequest(closed); err != nil {
		t.Errorf("a closed record at the bound: %v", err)
	}
}

func TestClosedRequestsArePruned(t *testing.T) {
	s := openTestStore(t)
	n := maxClosedRequests + 20
	for i := range n {
		r := openRequest(i)
		r.State, r.NextCheck = RequestInstalled, time.Time{}
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
	a, b := NewRequestID(reqEpoch), NewRequestID(reqEpoch.Add(time.Millisecond))
	if a >= b || len(a) > maxRequestID || !strings.HasPrefix(a, "20261201T200000.000Z-") {
		t.Errorf("ids %q, %q: want time-ordered, short, starting with the UTC time", a, b)
	}
	if NewRequestID(reqEpoch) == a {
		t.Error("two ids at the same instant are equal")
	}
}
