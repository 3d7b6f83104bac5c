package commands

import "testing"

func TestEntityOfStream(t *testing.T) {
	for stream, want := range map[string][2]string{
		"session-0195a0c0-0000-7000-8000-000000000001": {"session", "0195a0c0-0000-7000-8000-000000000001"},
		"resource-group-gpu-a100":                      {"resource-group", "gpu-a100"},
		"keypair-policy-default":                       {"keypair-policy", "default"},
		"keypair-AKIAXXXX":                             {"keypair", "AKIAXXXX"},
		"project-default/ml":                           {"project", "default/ml"},
		"user-email-a@b.c":                             {"user-email", "a@b.c"},
		"audit":                                        {"audit", ""},
	} {
		if typ, id := entityOfStream(stream); typ != want[0] || id != want[1] {
			t.Errorf("%s → %s, %s; want %s, %s", stream, typ, id, want[0], want[1])
		}
	}
}
