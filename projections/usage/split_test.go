package usage

import (
	"reflect"
	"testing"
	"time"
)

func TestSplitDays(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	const h = int64(time.Hour / time.Millisecond)
	for _, tc := range []struct {
		name     string
		from, to string
		want     []piece
	}{
		{"within a day", "2025-03-01T10:00:00Z", "2025-03-01T12:30:00Z", []piece{{"2025-03-01", 5 * h / 2}}},
		{"across midnight", "2025-03-01T23:00:00Z", "2025-03-02T01:00:00Z", []piece{{"2025-03-01", h}, {"2025-03-02", h}}},
		{"to midnight exactly", "2025-03-01T23:00:00Z", "2025-03-02T00:00:00Z", []piece{{"2025-03-01", h}}},
		{"three days", "2025-02-28T12:00:00Z", "2025-03-02T06:00:00Z", []piece{{"2025-02-28", 12 * h}, {"2025-03-01", 24 * h}, {"2025-03-02", 6 * h}}},
		{"another zone is cut at UTC midnight", "2025-03-02T08:00:00+09:00", "2025-03-02T10:00:00+09:00", []piece{{"2025-03-01", h}, {"2025-03-02", h}}},
		{"milliseconds", "2025-03-01T00:00:00.0004Z", "2025-03-01T00:00:01.5009Z", []piece{{"2025-03-01", 1500}}},
		{"empty", "2025-03-01T10:00:00Z", "2025-03-01T10:00:00Z", nil},
		{"backward", "2025-03-01T10:00:00Z", "2025-03-01T09:00:00Z", nil},
	} {
		if got := splitDays(at(tc.from), at(tc.to)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
