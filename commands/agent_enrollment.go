package commands

import "strings"

// agentEnrollmentPrefix starts an agent's enrollment stream. It must not
// start with "agent-" (the agents' own streams, whose ids may contain
// '-'): "agentkey-x" can never be agent "key-x"'s stream.
const agentEnrollmentPrefix = "agentkey-"

// AgentEnrollmentStream is the stream of an agent's enrollment: its
// one-time offers, the user keys it enrolled and those revoked.
func AgentEnrollmentStream(agentID string) string { return agentEnrollmentPrefix + agentID }

// ParseAgentEnrollmentStream returns the agent id of an enrollment
// stream, or false for any other stream.
func ParseAgentEnrollmentStream(stream string) (agentID string, ok bool) {
	return strings.CutPrefix(stream, agentEnrollmentPrefix)
}
