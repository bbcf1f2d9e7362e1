package fakees

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"
)

func TestFaults(t *testing.T) {
	e := capturedEnv(t)
	normal := e.get("/systems/nes/games").body

	e.srv.SetFaults(Faults{Status: 503})
	if got := e.get("/caps"); got.status != 503 || string(got.body) != "503 Service Unavailable" {
		t.Errorf("status fault: %d %q", got.status, got.body)
	}

	e.srv.SetFaults(Faults{Forbidden: true})
	if got := e.get("/caps"); got.status != 403 || string(got.body) != "403 - Forbidden" {
		t.Errorf("forbidden fault: %d %q", got.status, got.body)
	}

	e.srv.SetFaults(Faults{Malformed: true})
	got := e.get("/systems/nes/games")
	if json.Valid(got.body) || len(got.body) != len(normal) {
		t.Errorf("malformed fault: valid=%v len %d (want invalid, len %d)", json.Valid(got.body), len(got.body), len(normal))
	}
	if got := e.get("/caps"); json.Valid(got.body) {
		t.Error("malformed fault: /caps still valid JSON")
	}

	e.srv.SetFaults(Faults{Truncated: true})
	resp, err := http.Get(e.ln.URL() + "/systems/nes/games")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(b) >= len(normal) {
		t.Errorf("truncated fault: read %d bytes, err %v; want fewer than %d and unexpected EOF", len(b), err, len(normal))
	}

	e.srv.SetFaults(Faults{Dribble: time.Millisecond})
	if got := e.get("/systems/nes/games"); string(got.body) != string(normal) {
		t.Error("dribbled body differs")
	}

	e.srv.SetFaults(Faults{Dribble: 50 * time.Millisecond})
	c := &http.Client{Timeout: 100 * time.Millisecond}
	resp, err = c.Get(e.ln.URL() + "/systems/nes/games")
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Error("slow body: no timeout error")
	}

	e.srv.SetFaults(Faults{Latency: time.Second})
	if _, err := c.Get(e.ln.URL() + "/caps"); err == nil {
		t.Error("latency: no timeout error")
	}

	e.srv.SetFaults(Faults{})
	if got := e.get("/caps"); got.status != 200 {
		t.Errorf("faults off: %d", got.status)
	}
}

func TestListenerStopStart(t *testing.T) {
	e := capturedEnv(t)
	addr := e.ln.Addr()
	if err := e.ln.Stop(); err != nil {
		t.Fatal(err)
	}
	_, err := http.Get(e.ln.URL() + "/caps")
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("stopped: err %v, want connection refused", err)
	}
	if err := e.ln.Start(); err != nil {
		t.Fatal(err)
	}
	if e.ln.Addr() != addr {
		t.Errorf("restarted on %s, want %s", e.ln.Addr(), addr)
	}
	if got := e.get("/caps"); got.status != 200 {
		t.Errorf("restarted: %d", got.status)
	}
}

func TestKeepAliveMax(t *testing.T) {
	e := capturedEnv(t)
	c := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	var closes []bool
	for i := 0; i < 6; i++ {
		resp, err := c.Get(e.ln.URL() + "/isIdle")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		closes = append(closes, resp.Close)
	}
	want := []bool{false, false, false, false, true, false}
	for i := range want {
		if closes[i] != want[i] {
			t.Errorf("request %d: Connection close %v, want %v (cpp-httplib closes after 5)", i+1, closes[i], want[i])
		}
	}
}
