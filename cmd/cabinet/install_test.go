package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestSaveFlag(t *testing.T) {
	for _, tc := range []struct {
		in, wantErr string
	}{
		{"cabinet.mqtt.broker=tcp://ha.lan:1883", ""},
		{"cabinet.name=Living room", ""},
		{"cabinet.mqtt.password=hunter2", "use --save-secret cabinet.mqtt.password"},
		{"cabinet.romm.token=rmm_x", "use --save-secret"},
		{"global.retroarch.network_cmd_enable=true", "cabinet.* settings only"},
		{"cabinet.mqtt.brokr=tcp://x:1", "did you mean cabinet.mqtt.broker"},
		{"cabinet.mqtt.broker=http://x", "cabinet.mqtt.broker"},
		{"no-equals", "want key=value"},
		{"=x", "want key=value"},
	} {
		var s saveFlag
		err := s.Set(tc.in)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("--save %q: %v", tc.in, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("--save %q: error %v, want one with %q", tc.in, err, tc.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("--save %q: the error shows the secret: %v", tc.in, err)
		}
	}
}

func TestReadSecretsFromStdin(t *testing.T) {
	e := &env{Stdin: strings.NewReader("pw one\r\nrmm_token\n"), Stderr: &bytes.Buffer{}}
	got, err := readSecrets(e, []string{"cabinet.mqtt.password", "cabinet.romm.token"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Value != "pw one" || got[0].FileKey != "cabinet.mqtt.password_file" || got[1].Value != "rmm_token" || got[1].FileKey != "cabinet.romm.token_file" {
		t.Errorf("readSecrets = %+v", got)
	}
	// One line short: refused before anything is written.
	e.Stdin = strings.NewReader("only one\n")
	if _, err := readSecrets(e, []string{"cabinet.mqtt.password", "cabinet.romm.token"}); err == nil || !strings.Contains(err.Error(), "cabinet.romm.token") {
		t.Errorf("a missing line: %v, want an error naming the key", err)
	}
	var s secretFlag
	if err := s.Set("cabinet.mqtt.broker"); err == nil {
		t.Error("--save-secret accepted a key that is not a secret")
	}
}
