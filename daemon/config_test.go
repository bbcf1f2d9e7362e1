package daemon

import (
	"testing"

	"github.com/batocera-cabinet/cabinet/hook/paths"
)

// What a configuration change rebuilds is derived from the sections that
// differ, so a new key in a section needs no hand-kept list.
func TestDiffDerivesWhatToRebuild(t *testing.T) {
	base := func() Config {
		c := Config{Layout: paths.Layout{State: "/s", Run: "/r"}, LogLevel: "info"}
		c.Rules.Settings.ID = "abc"
		c.MQTT.Broker = "tcp://ha:1883"
		c.Tools.ESURL, c.Tools.Paths.StateDir = "http://127.0.0.1:1234", "/s"
		c.HTTP.Listen = ":8717"
		return c
	}
	tests := []struct {
		name   string
		change func(*Config)
		want   changes
	}{
		{"nothing", func(*Config) {}, changes{}},
		{"log level only", func(c *Config) { c.LogLevel = "debug" }, changes{}},
		{"tracker rule", func(c *Config) { c.Rules.Tracker.MinSession = 1 }, changes{rules: true}},
		{"broker", func(c *Config) { c.MQTT.Broker = "tcp://other:1883" }, changes{link: true}},
		{"password", func(c *Config) { c.MQTT.Password = "new" }, changes{link: true}},
		{"controls", func(c *Config) { c.Rules.Settings.Controls = true }, changes{rules: true, link: true}},
		{"name", func(c *Config) { c.Rules.Settings.Name = "Arcade"; c.Tools.Name = "Arcade" }, changes{rules: true, link: true, tools: true}},
		{"read only", func(c *Config) { c.Tools.ReadOnly = true }, changes{tools: true}},
		// The hand-kept list this replaced missed these two.
		{"paths root", func(c *Config) { c.Tools.Paths.ThermalZones = "/root/sys/x" }, changes{tools: true}},
		{"state dir", func(c *Config) { c.Layout.State = "/t"; c.Tools.Paths.StateDir = "/t" }, changes{tools: true, layout: true}},
		{"es url", func(c *Config) { c.Tools.ESURL = "http://127.0.0.1:1" }, changes{es: true, tools: true}},
		{"allowed hosts", func(c *Config) { c.HTTP.AllowedHosts = []string{"arcade.lan"} }, changes{http: true}},
		{"tls", func(c *Config) { c.HTTP.TLS.SelfSigned = true }, changes{http: true}},
		{"cf access", func(c *Config) {
			c.HTTP.Access = &Access{TeamDomain: "t.cloudflareaccess.com", Scopes: []string{"read"}}
		}, changes{http: true}},
	}
	for _, tt := range tests {
		old, cur := base(), base()
		tt.change(&cur)
		if got := diff(&old, &cur); got != tt.want {
			t.Errorf("%s: diff = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
