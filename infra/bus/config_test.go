package bus_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/bus"
)

func TestConfigDefaultsAreValid(t *testing.T) {
	t.Parallel()
	cfg := bus.Config{URL: "nats://127.0.0.1:4222"}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	d := cfg.WithDefaults()
	if d.AckWait != bus.DefaultAckWait || d.MaxInFlight != bus.DefaultMaxInFlight || d.Retries != bus.DefaultRetries || d.Replicas != 1 || d.ClientName != "cairn" {
		t.Errorf("defaults not applied: %+v", d)
	}
	if err := d.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	cluster := bus.Config{URL: "nats://a:4222, tls://user:secret@b:4222,ws://c:8080"}
	if err := cluster.Validate(); err != nil {
		t.Errorf("cluster URL list: %v", err)
	}
}

func TestConfigValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	cfg := bus.Config{
		URL:             "http://user:hunter2@x:1,nats://",
		AckWait:         -time.Second,
		MaxInFlight:     5000,
		MaxDeliveries:   -1,
		Retries:         -1,
		Replicas:        7,
		RetryMin:        time.Minute,
		RetryMax:        time.Second,
		DuplicateWindow: 48 * time.Hour, // over the reports' 24 h
	}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		`scheme "http"`, "no host", "ack wait", "max in flight", "max deliveries",
		"replicas", "retry min", "retries", "duplicate window",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not mention %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "hunter2") {
		t.Errorf("error shows the password:\n%s", msg)
	}
	if err := (bus.Config{}).Validate(); err == nil || !strings.Contains(err.Error(), "url: must be set") {
		t.Errorf("empty config: %v", err)
	}
}
