package install

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
)

// TestInstallDefaultTokenOnlyWhenNone: with the token functions cabinet
// install passes (cmd/cabinet/install.go), an install creates the default
// MCP token only when there is none: an upgrade keeps the default token and
// the named ones, and after `cabinet token revoke default` the next install
// makes a new default token and leaves the named ones alone.
func TestInstallDefaultTokenOnlyWhenNone(t *testing.T) {
	r := newRig(t)
	path := filepath.Join(r.tgt.StateDir, "token")
	st := httpauth.NewStore(path)
	withTokens := func(o *Options) {
		o.HasToken = func() bool { _, err := httpauth.ReadToken(path); return err == nil }
		o.NewToken = func() error { _, err := httpauth.NewToken(path); return err }
	}
	created := func(res Result) bool {
		for _, c := range res.Changed {
			if strings.Contains(c, "created the MCP token") {
				return true
			}
		}
		return false
	}
	res, err, _ := r.install(goodV1, withTokens)
	if err != nil || !created(res) {
		t.Fatalf("fresh install: %v, changes %q", err, res.Changed)
	}
	def, err := httpauth.ReadToken(path)
	if err != nil {
		t.Fatal(err)
	}
	laptop, _, err := st.Create("laptop", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err, _ = r.install(goodV1+"v2", withTokens)
	if err != nil || created(res) {
		t.Fatalf("upgrade: %v, changes %q", err, res.Changed)
	}
	if got, _ := httpauth.ReadToken(path); got != def {
		t.Error("the upgrade replaced the default token")
	}
	if err := st.Revoke(httpauth.DefaultName); err != nil {
		t.Fatal(err)
	}
	res, err, _ = r.install(goodV1+"v2", withTokens)
	if err != nil || !created(res) {
		t.Fatalf("install without a default token: %v, changes %q", err, res.Changed)
	}
	if got, _ := httpauth.ReadToken(path); got == def || got == "" {
		t.Error("no new default token")
	}
	l, err := st.List()
	if err != nil || len(l) != 2 || l[1].Name != "laptop" || l[1].SHA256 == "" || strings.Contains(l[1].SHA256, laptop) {
		t.Errorf("tokens after the installs: %+v, %v", l, err)
	}
}
