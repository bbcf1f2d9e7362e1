package main

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/binarytest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/conformance"
)

// conformanceScenarios are the active server scenarios of the official suite that apply to
// Cabinet; the pending ones are in .ci/conformance/baseline.yml with the reason. The others read
// the suite's own fixtures (test://static-text, test_simple_prompt, the tool test_elicitation…),
// which a cabinet has no reason to serve.
var conformanceScenarios = []string{"server-initialize", "ping", "tools-list", "logging-set-level", "dns-rebinding-protection",
	"resources-list", "resources-subscribe", "resources-unsubscribe", "prompts-list", "completion-complete"}

// TestConformance runs the official MCP conformance suite (0.1.13) against `cabinet serve`
// through a path the test owns that adds the bearer (the suite sends none): a loopback proxy
// that is the daemon's own origin seen from another port — it rewrites its own Host and Origin
// to the daemon's and passes every other one through, so the suite's DNS-rebinding requests
// (Host and Origin evil.example.com) reach the daemon as sent.
func TestConformance(t *testing.T) {
	cabinettest.Long(t, "the daemon and six runs of the conformance suite")
	bin := conformance.Require(t)
	_, conf := simCabinet(t, simulator.Options{})
	env := configEnv(conf)
	mcpURL, token, daemonLog, stop := startServe(t, env)
	defer stop()
	target, err := url.Parse(mcpURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	own := ln.Addr().String()
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
			r.Out.Host = r.In.Host
			if r.In.Host == own {
				r.Out.Host = target.Host
			}
			if o := r.In.Header.Get("Origin"); o == "http://"+own {
				r.Out.Header.Set("Origin", "http://"+target.Host)
			}
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1, // SSE streams go through as they come
	}
	srv := &http.Server{Handler: proxy}
	go srv.Serve(ln)
	defer srv.Close()
	suiteURL := "http://" + own + "/mcp"
	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			checks, out := conformance.Run(t, bin, suiteURL, sc)
			if len(checks) == 0 {
				t.Fatalf("no checks recorded:\n%s", out)
			}
			for _, c := range checks {
				switch c.Status {
				case "FAILURE":
					t.Errorf("%s: %s: %s", c.ID, c.Description, c.ErrorMessage)
				case "WARNING":
					t.Logf("warning %s: %s: %s", c.ID, c.Description, c.ErrorMessage)
				}
			}
			if t.Failed() {
				t.Logf("suite output:\n%s\nthe daemon's log, last lines:\n%s", out, lastLines(daemonLog.String(), 30))
			}
		})
	}
	t.Run("pending", func(t *testing.T) {
		root, err := binarytest.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		if out, err := conformance.Pending(t, bin, suiteURL, filepath.Join(root, ".ci", "conformance", "baseline.yml")); err != nil ||
			!strings.Contains(out, "Baseline check passed") {
			t.Errorf("the pending scenarios against the baseline: %v\n%s", err, out)
		}
	})
}
