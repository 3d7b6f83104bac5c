package bus

import (
	"github.com/ThreeDotsLabs/watermill/message"

	"fmt"
	"strings"

	"github.com/cairnhq/cairn/domain"
)

// Topics are NATS subjects. Every topic belongs to one JetStream stream.
const (
	// ReportsTopic is every agent's reports (kernel started, failed,
	// exited; heartbeats): the filter the manager consumes. An agent
	// publishes to its own ReportTopic, which the bus's permissions let
	// only that agent publish to. Stored in ReportsStream.
	ReportsTopic = reportTopicPrefix + "*"
	// reportTopicPrefix + an agent id is that agent's reports topic.
	reportTopicPrefix = "cairn.reports."
	// agentTopicPrefix + an agent id is that agent's topic (AgentTopic).
	agentTopicPrefix = "cairn.agent."
	// agentDurablePrefix + an agent id is the durable consumer of the
	// agent's topic (AgentDurable).
	agentDurablePrefix = "agent-"
	// inboxPrefix + an agent id is the prefix of the agent's reply
	// subjects (JetStream acknowledgements of its publishes).
	inboxPrefix = "_INBOX."

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

// ReportTopic is the topic agentID publishes its reports to:
// cairn.reports.<agentID>. Only that agent's credentials may publish there
// (AgentPermissions), so the subject a report arrives on names its sender.
func ReportTopic(agentID string) (string, error) {
	if err := ValidateID("agent id", agentID); err != nil {
		return "", err
	}
	return reportTopicPrefix + agentID, nil
}

// AgentDurable is the durable consumer an agent consumes its topic with:
// agent-<agentID>. The manager creates it (EnsureAgentConsumer); the agent
// may only bind to it.
func AgentDurable(agentID string) string { return agentDurablePrefix + agentID }

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
	if id, ok := strings.CutPrefix(topic, reportTopicPrefix); ok {
		if err := ValidateID("agent id", id); err != nil {
			return "", domain.Invalid("bus.topic", "topic", "%q: %v", topic, err)
		}
		return ReportsStream, nil
	}
	if id, ok := strings.CutPrefix(topic, agentTopicPrefix); ok {
		if err := ValidateID("agent id", id); err != nil {
			return "", domain.Invalid("bus.topic", "topic", "%q: %v", topic, err)
		}
		return AgentsStream, nil
	}
	return "", domain.Invalid("bus.topic", "topic", "%q is not a Cairn topic (want %s<agent id>, %s<agent id> or %s)", topic, agentTopicPrefix, reportTopicPrefix, ReportsTopic)
}

// deliverSubject is where JetStream pushes the messages of consumer durable
// of stream: unique per consumer, outside every stream.
func deliverSubject(stream, durable string) string {
	return fmt.Sprintf("%s%s.%s", deliverPrefix, stream, durable)
}

// ReportSender is the agent a report was published by, read from the
// subject it arrived on (MetaSubject, set by the bus on every message it
// delivers, never taken from the sender). The server lets only that
// agent's credentials publish there (AgentPermissions). ok is false for a
// message that did not arrive on an agent's reports topic.
func ReportSender(m *message.Message) (agentID string, ok bool) {
	id, ok := strings.CutPrefix(m.Metadata.Get(MetaSubject), reportTopicPrefix)
	if !ok || ValidateID("agent id", id) != nil {
		return "", false
	}
	return id, true
}

// Permissions are the subjects a bus user may publish and subscribe to.
type Permissions struct {
	Publish   []string
	Subscribe []string
}

// AgentPermissions are everything agentID needs on the bus, and nothing
// more: publishing its reports (with JetStream acknowledgements to its own
// inbox prefix), binding to and acknowledging its own consumer of its own
// topic, and receiving that consumer's deliveries. It cannot create or
// change consumers or streams, read a stream's messages directly, or touch
// another agent's subjects.
func AgentPermissions(agentID string) (Permissions, error) {
	if err := ValidateID("agent id", agentID); err != nil {
		return Permissions{}, err
	}
	durable := AgentDurable(agentID)
	return Permissions{
		Publish: []string{
			reportTopicPrefix + agentID,
			"$JS.API.CONSUMER.INFO." + AgentsStream + "." + durable,
			"$JS.ACK." + AgentsStream + "." + durable + ".>",
		},
		Subscribe: []string{
			AgentInboxPrefix(agentID) + ".>",
			deliverSubject(AgentsStream, durable),
		},
	}, nil
}

// AgentInboxPrefix is the prefix of agentID's reply subjects.
func AgentInboxPrefix(agentID string) string { return inboxPrefix + agentID }
