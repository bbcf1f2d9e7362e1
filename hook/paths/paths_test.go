package paths

import "testing"

// The names are a contract: installed scripts, doctor, the service script
// and cabinets already in use find these files by them.
func TestNames(t *testing.T) {
	l := Layout{State: "/userdata/system/cabinet", Run: "/var/run/cabinet"}
	for _, tt := range []struct{ got, want string }{
		{l.Store(), "/userdata/system/cabinet/cabinet.db"},
		{l.Spool(), "/userdata/system/cabinet/spool"},
		{l.Intake(), "/userdata/system/cabinet/intake.log"},
		{l.Log(), "/userdata/system/cabinet/cabinet.log"},
		{l.ID(), "/userdata/system/cabinet/id"},
		{l.MAC(), "/userdata/system/cabinet/mac"},
		{l.Token(), "/userdata/system/cabinet/token"},
		{l.FlushLock(), "/userdata/system/cabinet/flush.lock"},
		{l.Socket(), "/var/run/cabinet/cabinet.sock"},
		{l.PIDFile(), "/var/run/cabinet/serve.pid"},
		{l.UpFile(), "/var/run/cabinet/serve.up"},
		{l.Inbox(), "/var/run/cabinet/inbox"},
		{l.ScreensaverFlag(), "/var/run/cabinet/screensaver"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
}
