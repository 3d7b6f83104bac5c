package proxyserver

import (
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	good := Config{Store: "postgres://cairn@db/cairn?schema=c", GrantKeyFile: "k", AgentKeyFile: "s", BusURL: "nats://127.0.0.1:4222"}
	if err := good.Validate(); err != nil {
		t.Fatalf("a good config: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"beyond loopback without TLS", func(c *Config) { c.Listen = "0.0.0.0:443" }, "beyond loopback"},
		{"half of TLS", func(c *Config) { c.TLSCertFile = "c.pem" }, "both the certificate and the key"},
		{"metrics beyond loopback", func(c *Config) { c.MetricsListen = "0.0.0.0:9181" }, "loopback only"},
		{"sqlite", func(c *Config) { c.Store = "sqlite:///var/lib/cairn/cairn.db" }, "postgres://"},
		{"no grant key", func(c *Config) { c.GrantKeyFile = "" }, "grant key"},
		{"no agent key", func(c *Config) { c.AgentKeyFile = "" }, "agent key"},
		{"no bus", func(c *Config) { c.BusURL = "" }, "bus"},
		{"bad domain", func(c *Config) { c.Domain = "Apps" }, "domain"},
		{"public url with a path", func(c *Config) { c.PublicURL = "https://x.example/apps" }, "public url"},
	} {
		c := good
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
	for _, edit := range []func(*Config){
		func(c *Config) { c.Listen = "0.0.0.0:443"; c.TLSCertFile, c.TLSKeyFile = "c.pem", "k.pem" },
		func(c *Config) { c.Listen = "0.0.0.0:8081"; c.BehindTLS = true },
		func(c *Config) { c.MetricsListen = "off" },
	} {
		c := good
		edit(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func TestRedact(t *testing.T) {
	got := redact("nats://u:secret@a:4222,nats://b:4222")
	if strings.Contains(got, "secret") || !strings.Contains(got, "b:4222") {
		t.Fatalf("redact = %q", got)
	}
}
