package socket

import (
	"bufio"
	"bytes"
	"testing"
)

func TestReadLineBounded(t *testing.T) {
	var v map[string]any
	long := bytes.Repeat([]byte("x"), maxLine+10)
	if err := ReadLine(bufio.NewReader(bytes.NewReader(append(long, '\n'))), &v); err == nil {
		t.Error("an over-long line was accepted")
	}
	var buf bytes.Buffer
	WriteLine(&buf, Request{Op: OpEvent, Key: "k"})
	var req Request
	if err := ReadLine(bufio.NewReader(&buf), &req); err != nil || req.Op != OpEvent || req.Key != "k" {
		t.Errorf("round trip: %+v %v", req, err)
	}
}
