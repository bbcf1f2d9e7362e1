package esevents

import "testing"

func TestSamePieces(t *testing.T) {
	want := []string{`sh: 1: Syntax error: "(" unexpected (expecting ")")`, `sh: 1: Syntax error: "(" unexpected (expecting ")")`}
	got := "sh: 1: sh: 1: Syntax error: \"(\" unexpected (expecting \")\")\nSyntax error: \"(\" unexpected (expecting \")\")\n"
	if !samePieces(got, want) {
		t.Fatal("interleaved rejected")
	}
	if samePieces("sh: 1: Syntax error: \"(\" unexpected (expecting \")\")\n", want) {
		t.Fatal("one accepted")
	}
}
