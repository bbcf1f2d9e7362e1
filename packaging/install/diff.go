package install

import (
	"fmt"
	"strings"
)

// maxDiffCells bounds the line-matching table of Diff: the files Cabinet
// installs are a few dozen lines and batocera.conf a few hundred, so a
// larger pair is summarised instead of compared line by line.
const maxDiffCells = 4 << 20

// Diff renders a unified diff (3 lines of context) from old to new, named
// name, as `diff -u` would show it; "" when they are equal.
func Diff(name string, old, new []byte) string {
	if string(old) == string(new) {
		return ""
	}
	a, b := splitLines(string(old)), splitLines(string(new))
	if len(a)*len(b) > maxDiffCells {
		return fmt.Sprintf("--- %s\n+++ %s\n(%d lines before, %d after: too large to show line by line)\n", name, name, len(a), len(b))
	}
	ops := lineOps(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", name, name)
	const ctx = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from ctx lines before this change to ctx lines after the
		// last change that is at most 2*ctx equal lines further on.
		start := max(i-ctx, 0)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j
			} else if j-end > 2*ctx {
				break
			}
		}
		stop := min(end+ctx+1, len(ops))
		aStart, bStart, aLen, bLen := ops[start].a, ops[start].b, 0, 0
		for _, op := range ops[start:stop] {
			if op.kind != '+' {
				aLen++
			}
			if op.kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, op := range ops[start:stop] {
			out.WriteByte(op.kind)
			out.WriteString(op.text)
			out.WriteByte('\n')
			if op.noEOL {
				out.WriteString("\\ No newline at end of file\n")
			}
		}
		i = stop
	}
	return out.String()
}

type line struct {
	text  string
	noEOL bool
}

type op struct {
	kind  byte // ' ', '-', '+'
	text  string
	noEOL bool
	a, b  int // 0-based line numbers in old and new where this op sits
}

func splitLines(s string) []line {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, "\n")
	last := parts[len(parts)-1]
	parts = parts[:len(parts)-1]
	out := make([]line, 0, len(parts)+1)
	for _, p := range parts {
		out = append(out, line{text: p})
	}
	if last != "" {
		out = append(out, line{text: last, noEOL: true})
	}
	return out
}

// lineOps is the longest-common-subsequence edit script from a to b.
func lineOps(a, b []line) []op {
	n, m := len(a), len(b)
	// lcs[i][j] = length of the LCS of a[i:] and b[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, op{' ', a[i].text, a[i].noEOL, i, j})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', a[i].text, a[i].noEOL, i, j})
			i++
		default:
			ops = append(ops, op{'+', b[j].text, b[j].noEOL, i, j})
			j++
		}
	}
	return ops
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
