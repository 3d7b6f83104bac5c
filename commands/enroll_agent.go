package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// EnrollAgent uses an agent's enrollment offer: the token's digest must
// be the offer's, the offer unused and unexpired. The agent's user key
// (a public NATS nkey it made itself) is recorded, and the key it used
// before, if any, revoked. It carries no principal: the token is the
// credential. A token is used once: two concurrent enrollments with it
// append against the same expected revision, and the loser, reloading,
// finds the offer used (domain.ErrEnrollmentRefused).
type EnrollAgent struct {
	AgentID string
	Digest  string
	UserKey string
}

func (EnrollAgent) CommandName() string { return "agent.enroll" }

type enrollAgentHandler struct {
	enrollments repository[*domain.AgentEnrollment]
	clock
}

// newEnrollAgentHandler builds the handler over what it uses.
func newEnrollAgentHandler(enrollments repository[*domain.AgentEnrollment], now clock) enrollAgentHandler {
	return enrollAgentHandler{enrollments: enrollments, clock: now}
}

func (h enrollAgentHandler) Handle(ctx context.Context, md Metadata, cmd EnrollAgent) (Result, error) {
	if domain.CheckEnrollmentAgentID("agent.enroll", cmd.AgentID) != nil {
		// An id that cannot have an offer: the same answer as a wrong token.
		return Result{}, domain.ErrEnrollmentRefused
	}
	at := h.now()
	_, pos, err := h.enrollments.update(ctx, domain.AgentEnrollmentStream(cmd.AgentID), md, func(e *domain.AgentEnrollment) ([]domain.Event, error) {
		return e.Enroll(cmd.Digest, cmd.UserKey, at)
	})
	return result(pos, err)
}
