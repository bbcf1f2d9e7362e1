package pairing

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStoreRoundTrip(t *testing.T) {
	s := Store{Dir: filepath.Join(t.TempDir(), "romm")}
	if _, err := s.Load(); !errors.Is(err, ErrNotPaired) {
		t.Fatalf("empty store: %v, want ErrNotPaired", err)
	}
	want := Paired{Token: testToken, DeviceID: "12", URL: testURL, Scopes: []string{"roms.read"},
		PairedAt: start, ExpiresAt: start.Add(90 * 24 * time.Hour)}
	if err := s.Save(want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Load = %v, %v; want %v", got, err, want)
	}
	for _, p := range []string{s.TokenPath(), s.DevicePath()} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", p, fi.Mode().Perm())
		}
	}
	if b, _ := os.ReadFile(s.DevicePath()); strings.Contains(string(b), testToken) {
		t.Errorf("device.json holds the token")
	}
	if b, _ := os.ReadFile(s.TokenPath()); string(b) != testToken+"\n" {
		t.Errorf("token file holds %d bytes, want the token and a newline", len(b))
	}
}

// TestStoreSaveIsAtomic: a save replaces the files by rename (a new inode; a reader sees the old
// file or the new one, never a partial one) and leaves no temporary files behind.
func TestStoreSaveIsAtomic(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	first := Paired{Token: testToken, DeviceID: "1", URL: testURL, PairedAt: start}
	if err := s.Save(first); err != nil {
		t.Fatal(err)
	}
	inode := func(p string) uint64 {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	before := inode(s.TokenPath())
	second := Paired{Token: "rmm_" + strings.Repeat("b", 64), DeviceID: "2", URL: testURL, PairedAt: start.Add(time.Hour)}
	if err := s.Save(second); err != nil {
		t.Fatal(err)
	}
	if inode(s.TokenPath()) == before {
		t.Errorf("the token file was rewritten in place, not replaced")
	}
	if got, _ := s.Load(); got.DeviceID != "2" || got.Token != second.Token {
		t.Errorf("after the second save: %v", got)
	}
	entries, _ := os.ReadDir(s.Dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !reflect.DeepEqual(names, []string{"device.json", "token"}) {
		t.Errorf("store dir holds %v, want only device.json and token", names)
	}
	// A save that cannot happen changes nothing.
	if err := s.Save(Paired{Token: "has space", URL: testURL}); err == nil || strings.Contains(err.Error(), "has space") {
		t.Errorf("Save of a bad token: %v (must fail without quoting it)", err)
	}
	if got, _ := s.Load(); got.Token != second.Token {
		t.Errorf("a refused save changed the stored token")
	}
}

func TestStoreForget(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if err := s.Forget(); err != nil {
		t.Errorf("Forget with nothing stored: %v", err)
	}
	if err := s.Save(Paired{Token: testToken, URL: testURL}); err != nil {
		t.Fatal(err)
	}
	if err := s.Forget(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(); !errors.Is(err, ErrNotPaired) {
		t.Errorf("after Forget: %v", err)
	}
	if _, err := os.Stat(s.DevicePath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("device.json survived Forget")
	}
}

func TestStoreTokenFor(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if _, err := s.TokenFor(testURL); !errors.Is(err, ErrNotPaired) {
		t.Errorf("unpaired: %v", err)
	}
	if err := s.Save(Paired{Token: testToken, URL: testURL + "/"}); err != nil {
		t.Fatal(err)
	}
	if tok, err := s.TokenFor(testURL); err != nil || tok != testToken {
		t.Errorf("TokenFor(the paired URL) failed: %v", err)
	}
	if tok, err := s.TokenFor("http://elsewhere.lan"); !errors.Is(err, ErrOtherServer) || tok != "" {
		t.Errorf("TokenFor(another URL): %v (token given: %t)", err, tok != "")
	}
}

func TestStoreLoadDamaged(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"token only":      {"token": testToken + "\n"},
		"empty token":     {"token": "\n"},
		"token w/ spaces": {"token": "rmm_a rmm_b\n"},
		"bad device.json": {"token": testToken, "device.json": "{"},
	} {
		t.Run(name, func(t *testing.T) {
			s := Store{Dir: t.TempDir()}
			for n, text := range files {
				if err := os.WriteFile(filepath.Join(s.Dir, n), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			p, err := s.Load()
			if name == "token only" {
				if err != nil || p.Token != testToken || p.DeviceID != "" {
					t.Errorf("token without device.json: %v, %v", p, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "cabinet romm pair") || strings.Contains(err.Error(), "rmm_") {
				t.Errorf("Load = %v; want an error that says to pair again and quotes no token", err)
			}
		})
	}
}

func TestPairedHidesTheToken(t *testing.T) {
	p := Paired{Token: testToken, DeviceID: "7", URL: testURL}
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(f, p); strings.Contains(s, testToken) {
			t.Errorf("%s shows the token: %s", f, s)
		}
	}
}

// FuzzStoreLoad: whatever the files hold, Load does not panic, and a token it accepts is one word.
func FuzzStoreLoad(f *testing.F) {
	f.Add([]byte(testToken+"\n"), []byte(`{"device_id":"1","url":"http://romm.lan","scopes":["roms.read"],"paired_at":"2025-06-01T12:00:00Z"}`))
	f.Add([]byte(""), []byte("{"))
	f.Add([]byte("a b"), []byte(`{"paired_at":"yesterday"}`))
	f.Fuzz(func(t *testing.T, token, device []byte) {
		s := Store{Dir: t.TempDir()}
		if err := os.WriteFile(s.TokenPath(), token, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.DevicePath(), device, 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := s.Load()
		if err != nil {
			return
		}
		if p.Token == "" || strings.ContainsAny(p.Token, " \t\r\n") {
			t.Errorf("Load accepted token %q", p.Token)
		}
	})
}
