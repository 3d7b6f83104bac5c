package postgres

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		bad  []string // substrings of the error; none when valid
	}{
		{"zero", Options{}, nil},
		{"explicit", Options{Schema: "cairn_1", MaxEventSize: 1 << 20, MaxConns: 8, PollInterval: time.Second, NotifyInterval: time.Millisecond, ReadAllLimit: 10}, nil},
		{"bad schema", Options{Schema: "1x"}, []string{"schema"}},
		{"quoted schema", Options{Schema: `a"b`}, []string{"schema"}},
		{"long schema", Options{Schema: strings.Repeat("s", 64)}, []string{"schema"}},
		{"everything wrong", Options{MaxEventSize: -1, MaxConns: -1, PollInterval: -1, NotifyInterval: -1, ReadAllLimit: -1},
			[]string{"max event size", "max conns", "poll interval", "notify interval", "read all limit"}},
		{"event too large", Options{MaxEventSize: 1 << 30}, []string{"max event size"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if len(tt.bad) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate accepted invalid options")
			}
			for _, want := range tt.bad {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

func TestOptionsWithDefaults(t *testing.T) {
	o := Options{}.WithDefaults()
	if o.Schema != DefaultSchema || o.MaxEventSize != eventstore.DefaultMaxEventSize || o.MaxConns != DefaultMaxConns ||
		o.PollInterval != DefaultPollInterval || o.NotifyInterval != DefaultNotifyInterval || o.ReadAllLimit != DefaultReadAllLimit || o.TailEvents != DefaultTailEvents || o.Logger == nil {
		t.Errorf("defaults = %+v", o)
	}
	if err := o.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

func TestOpenRefusesInvalidOptions(t *testing.T) {
	_, err := Open(t.Context(), "postgres://nowhere.invalid/db", Options{Schema: "no-dashes"})
	if err == nil || errors.Is(err, eventstore.ErrClosed) {
		t.Fatalf("Open = %v, want an options error", err)
	}
}
