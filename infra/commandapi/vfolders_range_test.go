package commandapi

import "testing"

func TestParseRange(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		header               string
		size                 int64
		start, length        int64
		partial, satisfiable bool
	}{
		{"", 100, 0, 100, false, true},
		{"bytes=0-9", 100, 0, 10, true, true},
		{"bytes=90-", 100, 90, 10, true, true},
		{"bytes=90-200", 100, 90, 10, true, true},
		{"bytes=-10", 100, 90, 10, true, true},
		{"bytes=-200", 100, 0, 100, true, true},
		{"bytes=100-", 100, 0, 0, false, false},
		{"bytes=-0", 100, 0, 0, false, false},
		{"bytes=-5", 0, 0, 0, false, false},
		{"bytes=5-3", 100, 0, 100, false, true},
		{"bytes=0-1,4-5", 100, 0, 100, false, true},
		{"items=0-1", 100, 0, 100, false, true},
		{"bytes=x-1", 100, 0, 100, false, true},
		{"bytes=1", 100, 0, 100, false, true},
	} {
		start, length, partial, ok := parseRange(c.header, c.size)
		if start != c.start || length != c.length || partial != c.partial || ok != c.satisfiable {
			t.Errorf("parseRange(%q, %d) = %d, %d, %v, %v; want %d, %d, %v, %v", c.header, c.size,
				start, length, partial, ok, c.start, c.length, c.partial, c.satisfiable)
		}
	}
}

// Whatever the header, a range to send lies inside the file.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"bytes=0-9", "bytes=-5", "bytes=5-", "bytes=9223372036854775807-", "bytes=-9223372036854775808"} {
		f.Add(s, int64(100))
	}
	f.Fuzz(func(t *testing.T, header string, size int64) {
		if size < 0 {
			size = -size
		}
		if size < 0 {
			return
		}
		start, length, partial, ok := parseRange(header, size)
		switch {
		case !ok:
		case !partial && (start != 0 || length != size):
			t.Fatalf("whole file %d+%d of %d", start, length, size)
		case partial && (start < 0 || length <= 0 || start+length > size):
			t.Fatalf("range %d+%d of %d", start, length, size)
		}
	})
}
