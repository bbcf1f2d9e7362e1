package simulator

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/batocera-cabinet/cabinet/packaging"
)

// ConfigFile is the name WriteConfig gives the file in its folder.
const ConfigFile = "cabinet.conf"

// WriteConfig writes dir/cabinet.conf: the cabinet.* keys that point every
// Cabinet command at this simulated cabinet (its ES and RetroArch, its fake
// tree as cabinet.paths.root, a state dir inside it, a free loopback MCP
// address, and the fake RomM with its token file when it serves one), plus
// extra key=value lines (such as the demo's broker); an extra line replaces
// the simulator's line for the same key (of a key written twice the file's
// first would win). With that file alone, `CABINET_CONFIG=dir/cabinet.conf
// cabinet …` works against the simulator. The RomM token is not in the
// file, only the path of the file holding it.
func (c *Cabinet) WriteConfig(dir string, extra ...string) (string, error) {
	mcpAddr, err := freeTCP()
	if err != nil {
		return "", err
	}
	lines := []string{
		"# Written by `cabinet simulate --write-config`: Cabinet against a simulated cabinet.",
		"cabinet.name=Simulated Cabinet",
		"cabinet.paths.root=" + c.Root,
		"cabinet.state_dir=/userdata/system/cabinet",
		"cabinet.es.url=" + c.ESURL(),
		"cabinet.retroarch.addr=" + c.RetroArchAddr(),
		"cabinet.retroarch.screenshot_dir=/userdata/screenshots",
		"cabinet.mcp.listen=" + mcpAddr,
	}
	if c.RomM != nil {
		lines = append(lines, "cabinet.romm.url="+c.RomMURL(), "cabinet.romm.token_file="+RomMTokenFile)
	}
	lines = mergeLines(lines, extra)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, ConfigFile)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("write simulator config: %w", err)
	}
	return p, nil
}

// mergeLines replaces the line of base with the same key as an extra
// key=value line, and appends the other extra lines in order.
func mergeLines(base, extra []string) []string {
	at := map[string]int{}
	for i, l := range base {
		if k, _, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			at[strings.TrimSpace(k)] = i
		}
	}
	out := append([]string(nil), base...)
	for _, l := range extra {
		k, _, ok := strings.Cut(l, "=")
		if i, known := at[strings.TrimSpace(k)]; ok && known {
			out[i] = l
			continue
		}
		out = append(out, l)
	}
	return out
}

// InstallHooks installs Cabinet's ES and configgen scripts into the fake
// tree, calling binary with CABINET_CONFIG=configPath, so the simulated ES
// runs the real `cabinet hook` exactly as a cabinet would.
func (c *Cabinet) InstallHooks(binary, configPath string) (packaging.Layout, error) {
	abs, err := filepath.Abs(binary)
	if err != nil {
		return packaging.Layout{}, err
	}
	l := packaging.DefaultLayout()
	l.Binary = abs
	l.ESScripts = c.Path(l.ESScripts)
	l.UserScripts = c.Path(l.UserScripts)
	l.RunDir = c.Path(l.RunDir)
	l.Entries = c.Path(l.Entries)
	for _, s := range l.Files() {
		if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
			return l, err
		}
		if err := os.WriteFile(s.Path, []byte(s.Content), os.FileMode(s.Mode)); err != nil {
			return l, err
		}
	}
	env := "CABINET_CONFIG=" + configPath
	c.Events.Env = append(c.Events.Env, env)
	c.Configgen.Env = append(c.Configgen.Env, env)
	return l, nil
}

// freeTCP picks a free loopback TCP address.
func freeTCP() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
