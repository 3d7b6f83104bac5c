package bus_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/bus"
)

func TestAgentTopic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id, want string
	}{
		{"gpu-node-01", "cairn.agent.gpu-node-01"},
		{"A_b-9", "cairn.agent.A_b-9"},
		{"0f8fad5b-d9cb-469f-a165-70867728950e", "cairn.agent.0f8fad5b-d9cb-469f-a165-70867728950e"},
		{strings.Repeat("x", bus.MaxIDLength), "cairn.agent." + strings.Repeat("x", bus.MaxIDLength)},
		// Rejected, never rewritten:
		{"", ""},
		{"node.example.com", ""}, // a dot would add a subject token
		{"gpu 01", ""},
		{"*", ""},
		{">", ""},
		{"a*", ""},
		{"tab\there", ""},
		{"ünicode", ""},
		{"a/b", ""},
		{"$SYS", ""},
		{strings.Repeat("x", bus.MaxIDLength+1), ""},
	}
	for _, tt := range tests {
		got, err := bus.AgentTopic(tt.id)
		if tt.want == "" {
			if !errors.Is(err, domain.ErrInvalid) || got != "" {
				t.Errorf("AgentTopic(%q) = %q, %v; want an invalid error", tt.id, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("AgentTopic(%q) = %q, %v; want %q", tt.id, got, err, tt.want)
		}
	}
}

// FuzzAgentTopic: an accepted id makes a topic of exactly three tokens,
// without wildcards or whitespace, whose last token is the id itself.
func FuzzAgentTopic(f *testing.F) {
	for _, s := range []string{"a", "gpu-01", "a.b", "a b", "*", ">", "", "x_y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		topic, err := bus.AgentTopic(id)
		if err != nil {
			if !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("AgentTopic(%q): %v is not invalid", id, err)
			}
			return
		}
		tokens := strings.Split(topic, ".")
		if len(tokens) != 3 || tokens[0] != "cairn" || tokens[1] != "agent" || tokens[2] != id {
			t.Fatalf("AgentTopic(%q) = %q", id, topic)
		}
		if strings.ContainsAny(topic, "*> \t\r\n") {
			t.Fatalf("AgentTopic(%q) = %q has a wildcard or whitespace", id, topic)
		}
	})
}
