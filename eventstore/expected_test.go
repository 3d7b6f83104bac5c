package eventstore_test

import (
	"testing"

	"github.com/cairnhq/cairn/eventstore"
)

func TestExpectedRevision(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		exp      eventstore.ExpectedRevision
		code     int64
		str      string
		isAny    bool
		exact    int64 // -1: not an exact revision
		okActual []int64
		noActual []int64
	}{
		{"Any", eventstore.Any, -1, "any", true, -1, []int64{-1, 0, 5}, nil},
		{"zero value is Any", eventstore.ExpectedRevision{}, -1, "any", true, -1, []int64{-1, 0, 5}, nil},
		{"NoStream", eventstore.NoStream, -2, "no-stream", false, -1, []int64{-1}, []int64{0, 5}},
		{"StreamExists", eventstore.StreamExists, -3, "stream-exists", false, -1, []int64{0, 5}, []int64{-1}},
		{"Exact(0)", eventstore.Exact(0), 0, "0", false, 0, []int64{0}, []int64{-1, 1}},
		{"Exact(41)", eventstore.Exact(41), 41, "41", false, 41, []int64{41}, []int64{-1, 0, 40, 42}},
		{"Exact(-1) is NoStream", eventstore.Exact(-1), -2, "no-stream", false, -1, []int64{-1}, []int64{0}},
		{"Exact(-7) is NoStream", eventstore.Exact(-7), -2, "no-stream", false, -1, []int64{-1}, []int64{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.exp.Code(); got != tt.code {
				t.Errorf("Code() = %d, want %d", got, tt.code)
			}
			if got := tt.exp.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
			if got := tt.exp.IsAny(); got != tt.isAny {
				t.Errorf("IsAny() = %v, want %v", got, tt.isAny)
			}
			rev, ok := tt.exp.Revision()
			if ok != (tt.exact >= 0) || (ok && rev != tt.exact) {
				t.Errorf("Revision() = %d, %v; want exact %d", rev, ok, tt.exact)
			}
			for _, a := range tt.okActual {
				if !tt.exp.Check(a) {
					t.Errorf("Check(%d) = false, want true", a)
				}
			}
			for _, a := range tt.noActual {
				if tt.exp.Check(a) {
					t.Errorf("Check(%d) = true, want false", a)
				}
			}
		})
	}
	// Exact(-1) is not just similar to NoStream: it is the same value, so
	// errors carrying it compare equal.
	if eventstore.Exact(-1) != eventstore.NoStream {
		t.Error("Exact(-1) != NoStream")
	}
}
