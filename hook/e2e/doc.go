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
//	go test -race ./hook/e2e/                              # every scenario, both brokers
//	CABINET_REQUIRE_PEERS=1 go test -race ./hook/e2e/      # CI: a missing Mosquitto fails
//	go test -short ./hook/e2e/                             # skips the 60 s event-window wait
//	go test -run '^$' -bench HookStartup ./hook/e2e/        # start-up figures
package e2e
