package bounded

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

func TestReadBody(t *testing.T) {
	data := bytes.Repeat([]byte("x"), 10000)
	for _, tt := range []struct {
		name      string
		r         io.Reader
		announced int64
		max       int64
		want      int // bytes returned
		allocs    bool
	}{
		{"announced and within", bytes.NewReader(data), 10000, 20000, 10000, true},
		{"not announced", bytes.NewReader(data), -1, 20000, 10000, false},
		{"one byte at a time", iotest.OneByteReader(bytes.NewReader(data)), -1, 20000, 10000, false},
		{"over the bound: max+1", bytes.NewReader(data), -1, 100, 101, false},
		{"announced over the bound", bytes.NewReader(data), 10000, 100, 101, false},
		{"announcing less than it sends", bytes.NewReader(data), 10, 20000, 10000, false},
		{"empty", bytes.NewReader(nil), 0, 100, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadBody(tt.r, tt.announced, tt.max)
			if err != nil || len(got) != tt.want || !bytes.Equal(got, data[:tt.want]) {
				t.Fatalf("ReadBody: %d bytes, %v; want %d", len(got), err, tt.want)
			}
			if tt.allocs && cap(got) != int(tt.announced)+1 {
				t.Errorf("an announced answer of %d took a buffer of %d", tt.announced, cap(got))
			}
		})
	}
	boom := errors.New("boom")
	if _, err := ReadBody(iotest.ErrReader(boom), -1, 100); !errors.Is(err, boom) {
		t.Errorf("a failing reader: %v", err)
	}
}
