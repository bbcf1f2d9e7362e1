package deploy

import "strings"

// Quote makes s one word for a POSIX shell (dash, bash, the login shell
// Dropbear runs the command with): s between single quotes, in which
// nothing is special, with each quote in s closing them, adding an escaped
// quote and opening them again:
//
//	it's → 'it'\''s'
//
// Every word deploy puts in a remote command goes through it, so a value
// with spaces, quotes or $ reaches the remote program unchanged. (argv
// cannot hold NUL, so neither can s.)
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// command joins words into one shell command line, each word quoted.
func command(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}
