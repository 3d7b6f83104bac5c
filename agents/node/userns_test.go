package node

import (
	"strings"
	"testing"
)

func TestUserNSUnavailable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		limit    string
		rootless bool
		want     string // in the reason; "" for none
	}{
		{"15000\n", false, ""},
		{"", false, ""}, // unknown: Podman is not local
		{"0\n", false, "disabled"},
		{"15000\n", true, "rootless"},
		{"0\n", true, "disabled"},
	} {
		got := userNSUnavailable(tc.limit, tc.rootless, "unix:///run/user/1000/podman/podman.sock")
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("limit %q rootless %v: %q, want %q", tc.limit, tc.rootless, got, tc.want)
		}
	}
}
