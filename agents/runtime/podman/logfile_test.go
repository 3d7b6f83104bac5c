package podman

import (
	"bytes"
	"testing"

	"github.com/cairnhq/cairn/agents/runtime"
)

func TestRecordBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ line, want string }{
		{"2026-11-27T04:42:07.304810886+00:00 stdout F hello world\n", "hello world\n"},
		{"2026-11-27T04:42:07.304810886+00:00 stderr P a  b \n", "a  b "},
		{"2026-11-27T04:42:07.304810886+00:00 stdout F \n", "\n"},
		{"2026-11-27T04:42:07.304810886+00:00 stdout F\n", "\n"},
		{"2026-11-27T04:42:07.304810886+00:00 stdout P \n", ""},
	} {
		got, err := recordBytes([]byte(tc.line))
		if err != nil || string(got) != tc.want {
			t.Errorf("recordBytes(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
		}
	}
	for _, bad := range []string{"\n", "nospace\n", "time stdout\n"} {
		if _, err := recordBytes([]byte(bad)); err == nil {
			t.Errorf("recordBytes(%q) took a line that is not a record", bad)
		}
	}
}

// FuzzRecordBytes feeds lines of a log file, which a container's output
// fills: none may make the reader fail other than with an error.
func FuzzRecordBytes(f *testing.F) {
	f.Add([]byte("2026-11-27T04:42:07.304810886+00:00 stdout F hello\n"))
	f.Add([]byte("t s P \n"))
	f.Add([]byte("t s\n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		line = append(bytes.ReplaceAll(line, []byte{'\n'}, nil), '\n')
		out, err := recordBytes(line)
		if err == nil && len(out) >= len(line) {
			t.Errorf("recordBytes(%q) = %q: longer than its line", line, out)
		}
	})
}

// The API path (Podman elsewhere) gives the same bytes as the file.
func TestStreamLogsThroughTheAPI(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c := h.run(h.spec(chatty...))
	var viaAPI bytes.Buffer
	apiRes, err := h.rt.streamAPI(h.ctx, c.ID, runtime.LogRange{Follow: true}, &viaAPI)
	if err != nil {
		t.Fatal(err)
	}
	var viaFile bytes.Buffer
	fileRes, err := h.rt.StreamLogs(h.ctx, c.ID, runtime.LogRange{}, &viaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(viaAPI.Bytes(), viaFile.Bytes()) || apiRes != fileRes || !fileRes.Complete {
		t.Errorf("through the API %q, %+v;\nfrom the file %q, %+v", viaAPI.Bytes(), apiRes, viaFile.Bytes(), fileRes)
	}
	var mid bytes.Buffer
	if res, err := h.rt.streamAPI(h.ctx, c.ID, runtime.LogRange{Offset: 7, Limit: 9}, &mid); err != nil || mid.String() != viaFile.String()[7:16] || res.Next != 16 {
		t.Errorf("through the API from 7, 9 bytes: %q, %+v, %v", mid.String(), res, err)
	}
}
