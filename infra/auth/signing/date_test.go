package signing

import (
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	t.Parallel()
	seoul := time.FixedZone("", 9*3600)
	ny := time.FixedZone("", -5*3600)
	tests := []struct {
		raw  string
		want time.Time // zero: refused
		day  string
	}{
		{"2024-05-01T12:34:56.789012+00:00", time.Date(2024, 5, 1, 12, 34, 56, 789012000, time.UTC), "20240501"},
		{"2024-05-01T12:34:56.123Z", time.Date(2024, 5, 1, 12, 34, 56, 123000000, time.UTC), "20240501"},
		{"2024-05-01T12:34:56Z", time.Date(2024, 5, 1, 12, 34, 56, 0, time.UTC), "20240501"},
		{"2024-05-01t12:34:56z", time.Date(2024, 5, 1, 12, 34, 56, 0, time.UTC), "20240501"},
		{"2024-05-01 12:34:56", time.Date(2024, 5, 1, 12, 34, 56, 0, time.UTC), "20240501"},
		{"2024-05-02T01:00:00+09:00", time.Date(2024, 5, 2, 1, 0, 0, 0, seoul), "20240502"},
		{"2024-05-02T01:00:00+0900", time.Date(2024, 5, 2, 1, 0, 0, 0, seoul), "20240502"},
		{"2024-05-02T01:00:00+09", time.Date(2024, 5, 2, 1, 0, 0, 0, seoul), "20240502"},
		{"2024-04-30T23:00:00-05:00", time.Date(2024, 4, 30, 23, 0, 0, 0, ny), "20240430"},
		{"20160930T01:23:45Z", time.Date(2016, 9, 30, 1, 23, 45, 0, time.UTC), "20160930"},
		{"20160930T012345Z", time.Date(2016, 9, 30, 1, 23, 45, 0, time.UTC), "20160930"},
		{"2024-05-01T12:34:56,5Z", time.Date(2024, 5, 1, 12, 34, 56, 500000000, time.UTC), "20240501"},
		{"2024-05-01T12:34:56.123456789Z", time.Date(2024, 5, 1, 12, 34, 56, 123456789, time.UTC), "20240501"},
		{"Wed, 01 May 2024 12:00:00 GMT", time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), "20240501"},
		{"Wed, 01 May 2024 12:00:00 UTC", time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), "20240501"},
		{"Thu, 02 May 2024 01:00:00 +0900", time.Date(2024, 5, 2, 1, 0, 0, 0, seoul), "20240502"},
		{raw: ""},
		{raw: "yesterday"},
		{raw: "2024-05-01"},
		{raw: "2024-05-01T12:34"},
		{raw: "2024-02-30T12:00:00Z"},
		{raw: "2024-05-01T24:00:00Z"},
		{raw: "2024-05-01T12:34:60Z"},
		{raw: "2024-05-01T12:34:56."},
		{raw: "2024-05-01T12:34:56.1234567891Z"},
		{raw: "2024-05-01T12:34:56+24:00"},
		{raw: "2024-05-01T12:34:56+09:"},
		{raw: "2024-05-01T12:34:56Z "},
		{raw: "2024-0501T12:34:56Z"},
		{raw: "2024-05-01T1234:56Z"},
		{raw: "Wed, 01 May 2024 12:00:00 EST"},
		{raw: "1714564800"},
	}
	for _, tc := range tests {
		got, err := ParseDate(tc.raw)
		if tc.want.IsZero() {
			if ReasonOf(err) != ReasonInvalidDate {
				t.Errorf("%q: got %v, %v; want invalid-date", tc.raw, got, err)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("%q: got %v, %v; want %v", tc.raw, got, err, tc.want)
			continue
		}
		if d := signingDay(got); d != tc.day {
			t.Errorf("%q: day %s, want %s", tc.raw, d, tc.day)
		}
	}
}

func TestFormatDate(t *testing.T) {
	t.Parallel()
	for in, want := range map[time.Time]string{
		time.Date(2024, 5, 1, 12, 34, 56, 789012345, time.UTC):             "2024-05-01T12:34:56.789012+00:00",
		time.Date(2024, 5, 1, 12, 34, 56, 500000000, time.UTC):             "2024-05-01T12:34:56.500000+00:00",
		time.Date(2024, 5, 1, 12, 34, 56, 0, time.UTC):                     "2024-05-01T12:34:56+00:00",
		time.Date(2024, 5, 2, 1, 0, 0, 999, time.FixedZone("KST", 9*3600)): "2024-05-01T16:00:00+00:00",
	} {
		got := FormatDate(in)
		if got != want {
			t.Errorf("FormatDate(%v) = %q, want %q", in, got, want)
		}
		back, err := ParseDate(got)
		if err != nil || !back.Equal(in.Truncate(time.Microsecond)) {
			t.Errorf("ParseDate(%q) = %v, %v", got, back, err)
		}
	}
}
