package domain

import "time"

// Wire names of the events of agent enrollments (agentkey-<agent id>).
const (
	TypeAgentEnrollmentOffered = "agent.enrollment-offered"
	TypeAgentEnrolled          = "agent.enrolled"
	TypeAgentEnrollmentRevoked = "agent.enrollment-revoked"
)

// AgentEnrollmentOffered: a one-time enrollment token exists for an agent
// until ExpiresAt. Only its SHA-256 digest is recorded; the token was
// shown to the superadmin once. It replaces an unused earlier offer.
type AgentEnrollmentOffered struct {
	AgentID   string    `json:"agent_id"`
	Digest    string    `json:"digest"`
	ExpiresAt time.Time `json:"expires_at"`
	OfferedBy string    `json:"offered_by"`
	At        time.Time `json:"at"`
}

// AgentEnrolled: the offer was used by the agent, whose bus credentials
// are signed for UserKey (a public NATS user nkey; the seed stays on the
// agent's machine).
type AgentEnrolled struct {
	UserKey string    `json:"user_key"`
	Digest  string    `json:"digest"`
	At      time.Time `json:"at"`
}

// AgentEnrollmentRevoked: the bus refuses UserKey's credentials from At
// on (an empty UserKey withdraws an offer that was never used).
type AgentEnrollmentRevoked struct {
	UserKey string    `json:"user_key,omitempty"`
	Reason  string    `json:"reason"`
	At      time.Time `json:"at"`
}

func (AgentEnrollmentOffered) EventType() string { return TypeAgentEnrollmentOffered }
func (AgentEnrolled) EventType() string          { return TypeAgentEnrolled }
func (AgentEnrollmentRevoked) EventType() string { return TypeAgentEnrollmentRevoked }
