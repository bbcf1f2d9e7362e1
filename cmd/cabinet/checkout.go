//go:build !release

package main

// checkoutOnly is the synopsis of a command that release builds leave out
// (demo, simulate; see checkout_release.go). This build has them: the
// synopsis as it is.
func checkoutOnly(synopsis string) string { return synopsis }
