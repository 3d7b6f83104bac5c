package bus

import (
	"fmt"
	"strings"

	"github.com/cairnhq/cairn/domain"
)

// Topics are NATS subjects. Every topic belongs to one JetStream stream.
const (
	// ReportsTopic carries what agents report back: kernel started, failed,
	// exited, heartbeats. Stored in ReportsStream.
	ReportsTopic = "cairn.reports"
	// agentTopicPrefix + an agent id is that agent's topic (AgentTopic).
	agentTopicPrefix = "cairn.agent."

	// AgentsStream stores every agent topic (subjects cairn.agent.*).
	AgentsStream = "CAIRN_AGENTS"
	// ReportsStream stores ReportsTopic.
	ReportsStream = "CAIRN_REPORTS"

	// MaxIDLength is the longest agent id or durable name accepted, in bytes.
	MaxIDLength = 128

	// deliverPrefix starts the subject JetStream pushes a consumer's
	// messages to. It must stay outside every stream's subjects.
	deliverPrefix = "_CAIRN.deliver."
)

// AgentTopic is the topic the forwarder publishes an agent's allocations
// to: cairn.agent.<agentID>. The id must be a valid subject token (see
// ValidateID); an id that is not is rejected, never rewritten, so that two
// agents can never share a topic.
func AgentTopic(agentID string) (string, error) {
	if err := ValidateID("agent id", agentID); err != nil {
		return "", err
	}
	return agentTopicPrefix + agentID, nil
}

// ValidateID checks an agent id or a durable consumer name (what names the
// value in errors): 1 to MaxIDLength bytes of ASCII letters, digits, '-' and
// '_'. Dots, spaces and the wildcards '*' and '>' would change the meaning of
// a NATS subject, and dots are not allowed in consumer names. The error is
// domain.ErrInvalid.
func ValidateID(what, id string) error {
	const op = "bus.validate"
	if id == "" {
		return domain.Invalid(op, what, "must not be empty")
	}
	if len(id) > MaxIDLength {
		return domain.Invalid(op, what, "%q is longer than %d bytes", id, MaxIDLength)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !isIDByte(c) {
			return domain.Invalid(op, what, "%q: byte %d (%q) is not allowed; use ASCII letters, digits, '-' and '_'", id, i, c)
		}
	}
	return nil
}

func isIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// streamFor returns the stream that stores topic, or domain.ErrInvalid when
// topic is not a Cairn topic.
func streamFor(topic string) (string, error) {
	if topic == ReportsTopic {
		return ReportsStream, nil
	}
	if id, ok := strings.CutPrefix(topic, agentTopicPrefix); ok {
		if err := ValidateID("agent id", id); err != nil {
			return "", domain.Invalid("bus.topic", "topic", "%q: %v", topic, err)
		}
		return AgentsStream, nil
	}
	return "", domain.Invalid("bus.topic", "topic", "%q is not a Cairn topic (want %s<agent id> or %s)", topic, agentTopicPrefix, ReportsTopic)
}

// deliverSubject is where JetStream pushes the messages of consumer durable
// of stream: unique per consumer, outside every stream.
func deliverSubject(stream, durable string) string {
	return fmt.Sprintf("%s%s.%s", deliverPrefix, stream, durable)
}
