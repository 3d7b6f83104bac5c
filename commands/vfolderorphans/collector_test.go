package vfolderorphans

import (
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	if d := (Config{}).WithDefaults(); d.Grace != DefaultGrace || d.Interval != DefaultInterval || d.Clock == nil || d.Logger == nil {
		t.Fatalf("defaults %+v", d)
	}
	err := Config{Grace: -time.Second, Interval: -time.Second}.Validate()
	if err == nil {
		t.Fatal("negative durations accepted")
	}
	if _, err := New(Config{}, nil, nil); err == nil {
		t.Fatal("New without parts succeeded")
	}
}
