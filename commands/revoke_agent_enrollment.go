package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// RevokeAgentEnrollment revokes an agent's bus credentials (the user key
// it enrolled) and withdraws an unused offer. The bus disconnects and
// refuses the key from then on. Superadmins only.
type RevokeAgentEnrollment struct {
	Actor   Principal
	AgentID string
	Reason  string
}

func (RevokeAgentEnrollment) CommandName() string { return "agent.revoke-enrollment" }

type revokeAgentEnrollmentHandler struct {
	enrollments repository[*domain.AgentEnrollment]
	clock
}

// newRevokeAgentEnrollmentHandler builds the handler over what it uses.
func newRevokeAgentEnrollmentHandler(enrollments repository[*domain.AgentEnrollment], now clock) revokeAgentEnrollmentHandler {
	return revokeAgentEnrollmentHandler{enrollments: enrollments, clock: now}
}

func (h revokeAgentEnrollmentHandler) Handle(ctx context.Context, md Metadata, cmd RevokeAgentEnrollment) (Result, error) {
	const op = "agent.revoke-enrollment"
	if !cmd.Actor.isSuperadmin() {
		return Result{}, domain.Errorf(op, domain.KindForbidden, "only superadmins revoke agents' enrollments")
	}
	if domain.CheckEnrollmentAgentID(op, cmd.AgentID) != nil {
		return Result{}, domain.NotFound(op, "agent enrollment")
	}
	at := h.now()
	_, pos, err := h.enrollments.update(ctx, domain.AgentEnrollmentStream(cmd.AgentID), md, func(e *domain.AgentEnrollment) ([]domain.Event, error) {
		return e.Revoke(cmd.Reason, at)
	})
	return result(pos, err)
}
