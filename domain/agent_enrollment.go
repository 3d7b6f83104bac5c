package domain

import (
	"crypto/subtle"
	"slices"
	"time"
)

// MaxEnrollmentLifetime bounds how long an enrollment offer stays usable.
const MaxEnrollmentLifetime = 7 * 24 * time.Hour

// Reasons recorded with AgentEnrollmentRevoked.
const (
	EnrollmentRevokedByAdmin  = "revoked"
	EnrollmentReplaced        = "re-enrolled"
	maxEnrollmentAgentID      = 128
	userKeyLength             = 56
	maxEnrollmentOfferedByLen = 256
)

// ErrEnrollmentRefused is the one answer to a wrong, expired or used
// enrollment token: callers learn nothing about which it was.
var ErrEnrollmentRefused = &Error{Op: "agent.enroll", Kind: KindUnauthenticated,
	Message: "the enrollment token is wrong, expired or already used"}

// AgentEnrollment is how an agent got its bus credentials (stream
// agentkey-<agent id>): the current one-time offer (a token digest), the
// user key enrolled with it, and every key revoked so far. The zero
// AgentEnrollment does not exist.
type AgentEnrollment struct {
	stateOf
	agentID     string
	digest      string // of the current offer; "" when none is pending
	expiresAt   time.Time
	offerUsed   bool
	userKey     string // the key in use; "" when none
	revokedKeys []string
}

func (e *AgentEnrollment) AgentID() string { return e.agentID }

// UserKey is the public key of the agent's current credentials, "" when
// it has none.
func (e *AgentEnrollment) UserKey() string { return e.userKey }

// RevokedKeys are the user keys the bus must refuse.
func (e *AgentEnrollment) RevokedKeys() []string { return slices.Clone(e.revokedKeys) }

// RehydrateAgentEnrollment folds an agentkey stream's events.
func RehydrateAgentEnrollment(events []RecordedEvent) (*AgentEnrollment, error) {
	e := &AgentEnrollment{stateOf: stateOf{revision: -1}}
	if err := fold("agent-enrollment.rehydrate", events, e); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *AgentEnrollment) apply(ev Event) error {
	if _, offer := ev.(AgentEnrollmentOffered); !offer && !e.exists {
		return eventBeforeCreation("agent enrollment")
	}
	switch v := ev.(type) {
	case AgentEnrollmentOffered:
		e.exists = true
		e.agentID, e.digest, e.expiresAt, e.offerUsed = v.AgentID, v.Digest, v.ExpiresAt, false
	case AgentEnrolled:
		e.offerUsed, e.userKey = true, v.UserKey
	case AgentEnrollmentRevoked:
		if v.UserKey == "" {
			e.offerUsed = true // a withdrawn offer
			return nil
		}
		e.revokedKeys = append(e.revokedKeys, v.UserKey)
		if e.userKey == v.UserKey {
			e.userKey = ""
		}
	default:
		return foreignEvent(ev, "agent enrollment")
	}
	return nil
}

// CheckEnrollmentAgentID validates an agent id as the bus accepts it:
// 1 to 128 ASCII letters, digits, '-' and '_'.
func CheckEnrollmentAgentID(op, id string) error {
	p := &problems{op: op}
	p.checkAgentID("agent_id", id)
	return p.err()
}

func (p *problems) checkAgentID(field, id string) {
	switch {
	case id == "":
		p.bad(field, "required")
	case len(id) > maxEnrollmentAgentID:
		p.bad(field, "longer than %d bytes", maxEnrollmentAgentID)
	default:
		for i := 0; i < len(id); i++ {
			if c := id[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				p.bad(field, "use ASCII letters, digits, '-' and '_'")
				return
			}
		}
	}
}

// isUserKey: the shape of a public NATS user nkey (U and 55 base32
// characters). The signer checks its checksum too.
func isUserKey(s string) bool {
	if len(s) != userKeyLength || s[0] != 'U' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; (c < 'A' || c > 'Z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

// Offer records a one-time enrollment token (its digest) for agentID,
// usable until expiresAt (at most MaxEnrollmentLifetime after at). It
// replaces an unused offer; the key in use stays valid until the new
// offer is used.
func (e *AgentEnrollment) Offer(agentID, digest string, expiresAt time.Time, by string, at time.Time) ([]Event, error) {
	const op = "agent.offer-enrollment"
	p := &problems{op: op}
	p.checkAgentID("agent_id", agentID)
	if !isDigest(digest) {
		p.bad("digest", "must be %d lower-case hex digits", tokenDigestLength)
	}
	if by == "" || len(by) > maxEnrollmentOfferedByLen {
		p.bad("offered_by", "required, at most %d bytes", maxEnrollmentOfferedByLen)
	}
	p.checkAt(at)
	if !at.IsZero() {
		switch life := expiresAt.Sub(at); {
		case life <= 0:
			p.bad("expires_at", "must be after the time of the offer")
		case life > MaxEnrollmentLifetime:
			p.bad("expires_at", "must be at most %s after the time of the offer", MaxEnrollmentLifetime)
		}
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	if e.exists && e.agentID != agentID {
		return nil, Errorf(op, KindInternal, "enrollment stream of agent %q offered for %q", e.agentID, agentID)
	}
	return []Event{AgentEnrollmentOffered{AgentID: agentID, Digest: digest, ExpiresAt: expiresAt.UTC(), OfferedBy: by, At: at}}, nil
}

// Enroll uses the pending offer: digest must match it (compared in
// constant time), the offer must be unused and unexpired at at. The key
// in use before, if any, is revoked. A wrong, expired or used token is
// ErrEnrollmentRefused, the same for each; a malformed or previously
// revoked user key is KindInvalid.
func (e *AgentEnrollment) Enroll(digest, userKey string, at time.Time) ([]Event, error) {
	const op = "agent.enroll"
	p := &problems{op: op}
	if !isUserKey(userKey) {
		p.bad("user_key", "not a public NATS user key (U...)")
	}
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	usable := e.exists && e.digest != "" && !e.offerUsed && at.Before(e.expiresAt)
	// Compare even when unusable, so the time taken tells nothing.
	match := len(digest) == len(e.digest) && subtle.ConstantTimeCompare([]byte(digest), []byte(e.digest)) == 1
	if !usable || !match {
		return nil, ErrEnrollmentRefused
	}
	if userKey == e.userKey || slices.Contains(e.revokedKeys, userKey) {
		return nil, Invalid(op, "user_key", "this key was enrolled before: make a new one")
	}
	var out []Event
	if e.userKey != "" {
		out = append(out, AgentEnrollmentRevoked{UserKey: e.userKey, Reason: EnrollmentReplaced, At: at})
	}
	return append(out, AgentEnrolled{UserKey: userKey, Digest: e.digest, At: at}), nil
}

// Revoke revokes the key in use and withdraws an unused offer. With
// neither, it is KindNotFound.
func (e *AgentEnrollment) Revoke(reason string, at time.Time) ([]Event, error) {
	const op = "agent.revoke-enrollment"
	if at.IsZero() {
		return nil, Invalid(op, "at", "must be set")
	}
	if reason == "" {
		reason = EnrollmentRevokedByAdmin
	}
	pending := e.exists && e.digest != "" && !e.offerUsed
	if e.userKey == "" && !pending {
		return nil, NotFound(op, "agent enrollment")
	}
	return []Event{AgentEnrollmentRevoked{UserKey: e.userKey, Reason: reason, At: at}}, nil
}
