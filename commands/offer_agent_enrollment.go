package commands

import (
	"context"
	"time"

	"github.com/cairnhq/cairn/domain"
)

// OfferAgentEnrollment records a one-time enrollment token for an agent:
// whoever holds the token until ExpiresAt may enroll one user key as
// that agent on the bus (EnrollAgent). The caller generates the token
// (infra/auth/token) and passes only its digest. It replaces an unused
// offer. Superadmins only: the bus trusts enrolled agents with every
// session placed on them.
type OfferAgentEnrollment struct {
	Actor     Principal
	AgentID   string
	Digest    string
	ExpiresAt time.Time
}

func (OfferAgentEnrollment) CommandName() string { return "agent.offer-enrollment" }

type offerAgentEnrollmentHandler struct {
	enrollments repository[*domain.AgentEnrollment]
	clock
}

// newOfferAgentEnrollmentHandler builds the handler over what it uses.
func newOfferAgentEnrollmentHandler(enrollments repository[*domain.AgentEnrollment], now clock) offerAgentEnrollmentHandler {
	return offerAgentEnrollmentHandler{enrollments: enrollments, clock: now}
}

func (h offerAgentEnrollmentHandler) Handle(ctx context.Context, md Metadata, cmd OfferAgentEnrollment) (Result, error) {
	const op = "agent.offer-enrollment"
	if !cmd.Actor.isSuperadmin() {
		return Result{}, domain.Errorf(op, domain.KindForbidden, "only superadmins enroll agents")
	}
	if err := domain.CheckEnrollmentAgentID(op, cmd.AgentID); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.enrollments.update(ctx, domain.AgentEnrollmentStream(cmd.AgentID), md, func(e *domain.AgentEnrollment) ([]domain.Event, error) {
		return e.Offer(cmd.AgentID, cmd.Digest, cmd.ExpiresAt, cmd.Actor.UserID.String(), at)
	})
	return result(pos, err)
}
