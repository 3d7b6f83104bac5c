package sqlite

import (
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/eventstore"
)

func TestOptionsDefaults(t *testing.T) {
	t.Parallel()
	if err := (Options{}).Validate(); err != nil {
		t.Fatalf("zero options: %v", err)
	}
	o := Options{Synchronous: "normal"}.WithDefaults()
	if o.MaxEventSize != eventstore.DefaultMaxEventSize || o.Synchronous != "NORMAL" || o.MaxBatch != DefaultMaxBatch ||
		o.BusyTimeout != DefaultBusyTimeout || o.ReadConns != DefaultReadConns || o.Logger == nil {
		t.Fatalf("defaults: %+v", o)
	}
}

func TestOptionsValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	err := Options{
		MaxEventSize: -1,
		Synchronous:  "OFF",
		MaxBatch:     maxMaxBatch + 1,
		BusyTimeout:  1500 * time.Microsecond,
		ReadConns:    -2,
	}.Validate()
	if err == nil {
		t.Fatal("invalid options accepted")
	}
	for _, want := range []string{"max event size", "synchronous", "max batch", "busy timeout", "read conns"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s: %v", want, err)
		}
	}
}
