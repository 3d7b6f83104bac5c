package node

import (
	"encoding/json"
	"testing"
)

func TestParseControl(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in         string
		cols, rows int
		resize     bool
		bad        bool
	}{
		{in: `{"type":"resize","cols":120,"rows":40}`, cols: 120, rows: 40, resize: true},
		{in: `{"type":"hello"}`},
		{in: `{"type":"resize","cols":"wide"}`, bad: true},
		{in: `not json`, bad: true},
		{in: `[]`, bad: true},
	} {
		rm, err := parseControl([]byte(tc.in))
		switch {
		case tc.bad:
			if err == nil {
				t.Errorf("%s: no error", tc.in)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.in, err)
		case tc.resize != (rm != nil):
			t.Errorf("%s: resize = %+v", tc.in, rm)
		case rm != nil && (rm.Cols != tc.cols || rm.Rows != tc.rows):
			t.Errorf("%s: size %dx%d", tc.in, rm.Cols, rm.Rows)
		}
	}
}

// A client's control frames never panic the agent, and a resize that
// decodes says what it was sent.
func FuzzParseControl(f *testing.F) {
	f.Add([]byte(`{"type":"resize","cols":120,"rows":40}`))
	f.Add([]byte(`{"type":"x"}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rm, err := parseControl(data)
		if err != nil || rm == nil {
			return
		}
		var again resizeMessage
		if err := json.Unmarshal(data, &again); err != nil || again != *rm {
			t.Fatalf("%q: parsed %+v, decodes to %+v (%v)", data, *rm, again, err)
		}
	})
}

// Scrollback starts at a line once output was dropped.
func TestScrollback(t *testing.T) {
	t.Parallel()
	k := tailKeeper{max: 8}
	_, _ = k.Write([]byte("abc\x1b[1m"))
	if got := string(scrollback(k.kept())); got != "abc\x1b[1m" {
		t.Errorf("nothing dropped: %q", got)
	}
	_, _ = k.Write([]byte("de\nfgh"))
	if got := string(scrollback(k.kept())); got != "fgh" {
		t.Errorf("dropped: %q, want from the line start", got)
	}
	_, _ = k.Write([]byte("ijklmnop"))
	if got := string(scrollback(k.kept())); got != "ijklmnop" {
		t.Errorf("no line start: %q, want all kept", got)
	}
}
