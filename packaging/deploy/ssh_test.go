package deploy

import (
	"strings"
	"testing"
)

// TestClassify maps what OpenSSH 9 prints when it exits 255 (copied from
// real runs) to one sentence that says what to do.
func TestClassify(t *testing.T) {
	tests := []struct {
		name, host, stderr string
		kind               failure
		want               string
	}{
		{"unknown key, strict", "cabinet.lan", "No ED25519 host key is known for cabinet.lan and you have requested strict checking.\nHost key verification failed.\n", hostKeyUnknown, "connect once with `ssh root@cabinet.lan`"},
		{"unknown key, batch", "pi@10.0.0.5", "Host key verification failed.\r\n", hostKeyUnknown, "`ssh pi@10.0.0.5`"},
		{"changed key", "root@cabinet", "@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n...\nHost key verification failed.\n", hostKeyChanged, "`ssh-keygen -R cabinet`"},
		{"refused key", "cabinet", "root@127.0.0.1: Permission denied (publickey).\n", authRefused, "`ssh-copy-id root@cabinet`"},
		{"password refused", "root@cabinet", "root@cabinet: Permission denied (publickey,password).\n", authRefused, "root password is linux"},
		{"too many keys", "cabinet", "Received disconnect from 10.0.0.5 port 22:2: Too many authentication failures\n", authRefused, "ssh-copy-id"},
		{"closed port", "cabinet", "ssh: connect to host 127.0.0.1 port 1: Connection refused\n", connRefused, "its SSH service enabled"},
		{"no such host", "cabnet.lan", "ssh: Could not resolve hostname cabnet.lan: Name or service not known\n", unresolved, "cannot resolve cabnet.lan"},
		{"switched off", "cabinet", "ssh: connect to host 10.0.0.5 port 22: Connection timed out\n", timedOut, "did not answer within 10s"},
		{"other network", "cabinet", "ssh: connect to host 10.9.0.5 port 22: No route to host\n", noRoute, "no route to cabinet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			se := classify(tt.host, tt.stderr)
			if se == nil {
				t.Fatalf("classify(%q) = nil, want kind %d", tt.stderr, tt.kind)
			}
			if se.kind != tt.kind || !strings.Contains(se.msg, tt.want) {
				t.Errorf("got kind %d %q, want kind %d with %q", se.kind, se.msg, tt.kind, tt.want)
			}
			if strings.Contains(se.msg, "\n") {
				t.Errorf("%q is more than one line", se.msg)
			}
		})
	}
	if se := classify("cabinet", "install: cannot write /userdata: read-only file system\n"); se != nil {
		t.Errorf("a remote program's failure read as ssh's: %v", se)
	}
}

// TestOptionsNeverRelaxHostKeys keeps deploy from turning host key checking
// off, whatever mode it runs in.
func TestOptionsNeverRelaxHostKeys(t *testing.T) {
	for _, batch := range []bool{true, false} {
		c := &sshClient{argv: []string{"ssh"}, host: "cabinet", controlPath: "/tmp/x/%C", batch: batch}
		opts := strings.Join(c.options(), " ")
		for _, bad := range []string{"StrictHostKeyChecking", "UserKnownHostsFile", "GlobalKnownHostsFile", "CheckHostIP"} {
			if strings.Contains(opts, bad) {
				t.Errorf("batch=%v: options %q set %s", batch, opts, bad)
			}
		}
		if got := strings.Contains(opts, "BatchMode=yes"); got != batch {
			t.Errorf("batch=%v: options %q", batch, opts)
		}
		for _, want := range []string{"ControlMaster=auto", "ControlPath=/tmp/x/%C", "ConnectTimeout=10"} {
			if !strings.Contains(opts, want) {
				t.Errorf("options %q lack %s", opts, want)
			}
		}
	}
}

func TestTailBuffer(t *testing.T) {
	tb := &tailBuffer{max: 8}
	for _, s := range []string{"abc", "defgh", "ijkl"} {
		tb.Write([]byte(s))
	}
	if got := tb.String(); got != "efghijkl" {
		t.Errorf("got %q, want the last 8 bytes", got)
	}
}

func TestParseSHA256(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	tests := []struct{ in, want string }{
		{sum + "  /userdata/system/cabinet/bin/.cabinet.deploy\n", sum},
		{sum + "\n", sum},
		{"", ""},
		{"sha256sum: /x: No such file or directory\n", ""},
		{strings.ToUpper(sum) + "  x\n", ""},
		{sum[:63] + "  x\n", ""},
	}
	for _, tt := range tests {
		if got := parseSHA256(tt.in); got != tt.want {
			t.Errorf("parseSHA256(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzParseSHA256(f *testing.F) {
	f.Add(strings.Repeat("0", 64) + "  file\n")
	f.Fuzz(func(t *testing.T, in string) {
		if got := parseSHA256(in); got != "" && (len(got) != 64 || !strings.HasPrefix(strings.TrimLeft(in, " \t\n\r\v\f"), got)) {
			t.Fatalf("parseSHA256(%q) = %q", in, got)
		}
	})
}

func TestRootOf(t *testing.T) {
	tests := []struct {
		sets    []string
		want    string
		wantErr bool
	}{
		{nil, "", false},
		{[]string{"cabinet.mqtt.broker=tcp://ha:1883"}, "", false},
		{[]string{"cabinet.paths.root=/tmp/fake/"}, "/tmp/fake", false},
		{[]string{"cabinet.paths.root=/a", "cabinet.paths.root=/b"}, "/b", false},
		{[]string{"cabinet.paths.root=/"}, "", false},
		{[]string{"cabinet.paths.root=relative"}, "", true},
	}
	for _, tt := range tests {
		got, err := rootOf(tt.sets)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("rootOf(%q) = %q, %v; want %q (error %v)", tt.sets, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"fine", Options{Host: "root@cabinet", Sets: []string{"a=b"}, SecretKeys: []string{"cabinet.mqtt.password"}}, ""},
		{"no host", Options{}, "name the cabinet"},
		{"option as host", Options{Host: "-oProxyCommand=x"}, "not a host name"},
		{"space in host", Options{Host: "root@cab inet"}, "not a host name"},
		{"set without value", Options{Host: "h", Sets: []string{"cabinet.x"}}, "want key=value"},
		{"secret on the command line", Options{Host: "h", SecretKeys: []string{"cabinet.mqtt.password=hunter2"}}, "never taken from the command line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.normalize()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("got %v, want %q", err, tt.wantErr)
			}
			if err == nil && (len(tt.o.SSHCommand) == 0 || tt.o.Stdout == nil || tt.o.Stderr == nil) {
				t.Errorf("defaults not filled: %+v", tt.o)
			}
		})
	}
}
