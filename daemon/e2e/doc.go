// Package e2e holds the fault tests and the speed benchmark of `cabinet
// serve` (issue 6, "Faults and bad input" and "Speed"). The binary is built
// once and the daemon runs as a real process (`cabinet serve --log-stderr`)
// against a simulated cabinet (fake EmulationStation, the real hook scripts
// installed in its tree) and, for every broker-related test, both the
// embedded broker and a real Mosquitto. What Home Assistant would see is
// read back from the broker, live and as the retained view a new
// subscriber gets; what the daemon kept, from its status on the unix socket
// and from the store once it has stopped. Under -race the daemon itself is
// race-built, and a data race it reports fails the test.
//
// The package has no production code; everything lives in _test.go files.
//
//	go test -race ./daemon/e2e/                             # every fault test, both brokers (about 3 minutes)
//	CABINET_REQUIRE_PEERS=1 go test -race ./daemon/e2e/     # CI: a missing Mosquitto or mcpcheck fails
//	go test -short ./daemon/e2e/                            # a smoke set: the embedded broker, 5 kills instead of 100
//	CABINET_E2E_KEEP=1 go test ./daemon/e2e/                # keep a failed test's files
//	go test -run '^$' -bench . ./daemon/e2e/                # speed figures (about 2 minutes;
//	                                                        # CABINET_E2E_BENCH_RUNS, CABINET_E2E_IDLE)
package e2e
