package simulator

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
)

// RomMTokenFile is where WriteConfig puts the fake RomM's token, as a
// cabinet path (inside the fake tree): the file `cabinet install
// --save-secret cabinet.romm.token` would write, readable by its owner only.
const RomMTokenFile = "/userdata/system/cabinet/secrets/romm.token"

// rommOnCabinet is the fake RomM's ROM the simulator also puts on the
// cabinet: its file in the fake tree and an ES game for it, so the library
// tools find it there by name and size.
const rommOnCabinet = fakeromm.ROMAlphaQuest

// rommListener serves the fake RomM on one loopback TCP address.
type rommListener struct {
	srv    *http.Server
	ln     net.Listener
	served chan struct{}
}

// startRomM starts the fake RomM on addr ("" means 127.0.0.1:0).
func (c *Cabinet) startRomM(addr string) error {
	s, err := fakeromm.New(fakeromm.Options{ReferenceDir: rommReferenceDir()})
	if err != nil {
		return err
	}
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("simulator: serve RomM: %w", err)
	}
	l := &rommListener{ln: ln, served: make(chan struct{}),
		srv: &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}}
	go func() {
		defer close(l.served)
		l.srv.Serve(ln)
	}()
	c.RomM, c.romm = s, l
	return nil
}

// RomMURL is the fake RomM's base URL, "" when the simulator serves none.
func (c *Cabinet) RomMURL() string {
	if c.romm == nil {
		return ""
	}
	return "http://" + c.romm.ln.Addr().String()
}

func (l *rommListener) close() {
	l.srv.Close()
	<-l.served
}

// addRomMGame puts the fake RomM's rommOnCabinet ROM on the cabinet: an ES
// game in the system folder of its platform (when the library has that
// system) whose file, written by writeRomMFiles, holds the ROM's bytes.
func (c *Cabinet) addRomMGame() error {
	rom, ok := c.RomM.ROM(rommOnCabinet)
	if !ok || len(rom.Files) != 1 {
		return errors.New("simulator: the fake RomM has no single-file ROM to put on the cabinet")
	}
	system := path.Base(rom.Files[0].FilePath) // roms/<fs_slug>
	if _, ok := c.Library.System(system); !ok {
		return nil
	}
	g, err := c.Library.AddGame(system, rom.FSName, rom.Name, nil)
	if err != nil {
		return fmt.Errorf("simulator: add the RomM game: %w", err)
	}
	c.rommGame, c.rommName, c.rommSys = g.Path, g.Name, system
	c.rommBytes = rom.Files[0].Bytes
	return nil
}

// writeRomMFiles writes the RomM game's file over the placeholder buildTree
// wrote, and the token file WriteConfig names.
func (c *Cabinet) writeRomMFiles() error {
	if c.rommGame != "" {
		if err := os.WriteFile(c.Path(c.rommGame), c.rommBytes, 0o644); err != nil {
			return err
		}
	}
	p := c.Path(RomMTokenFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(c.RomM.Token()+"\n"), 0o600)
}

// RomMGamePath is the ES path of the fake RomM's ROM on the cabinet, ""
// when there is none.
func (c *Cabinet) RomMGamePath() string { return c.rommGame }

// rommReferenceDir is where the fake RomM reads RomM's OpenAPI documents:
// ../shared/reference beside the module (fakeromm's own default), else the
// copies the openapi package tests with, so that a fresh clone serves the
// real document too. "" leaves fakeromm's default (a minimal document when
// neither is found, as when the binary runs outside the module).
func rommReferenceDir() string {
	root, err := moduleRoot()
	if err != nil {
		return ""
	}
	for _, d := range []string{filepath.Join(root, "..", "shared", "reference"), filepath.Join(root, "daemon", "library", "openapi", "testdata")} {
		if _, err := os.Stat(filepath.Join(d, "romm-openapi-5.3.1.json")); err == nil {
			return d
		}
	}
	return ""
}

// moduleRoot walks up from the working directory to go.mod (the walk of
// simulator/testpeers/binarytest, which the production binary must not
// link).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
