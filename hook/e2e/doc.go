// Package e2e holds the end-to-end tests and the start-up benchmark of
// `cabinet hook`: the binary is built once, installed under a fake Batocera
// root with the exact scripts packaging renders for EmulationStation and
// configgen, and fired the way ES and Batocera's launcher run them (ES's
// quoting through /bin/sh -c, concurrently; configgen synchronously) against
// the embedded broker and a real Mosquitto. What Home Assistant would see is
// read back from the broker: a capture of every publish (retain flags kept)
// and the retained topics a fresh subscriber gets.
//
// The package has no production code; everything lives in _test.go files.
//
//	go test -race ./hook/e2e/                          # every scenario, both brokers (about 4 min)
//	go test -race -parallel 4 ./hook/e2e/              # the same, overlapped (about 2.5 min)
//	CABINET_REQUIRE_PEERS=1 go test -race ./hook/e2e/  # CI: a missing Mosquitto fails
//	go test -short ./hook/e2e/                         # a smoke set: the embedded broker, the short scenarios
//	go test -run '^$' -bench HookStartup ./hook/e2e/   # start-up figures
//
// Environment: CABINET_E2E_KEEP=1 keeps a failed test's fake root;
// CABINET_E2E_BENCH_RUNS=N changes the benchmark's 200 runs per row.
package e2e
