//go:build race

package e2e

// raceEnabled: under `go test -race` the daemon is race-built too, so a
// data race in it under faults (kills, reconnects, reloads) fails the test.
const raceEnabled = true
