package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// CreateKeypairPolicy creates a keypair resource policy (superadmins
// only).
type CreateKeypairPolicy struct {
	Actor Principal
	Name  string
	Spec  domain.KeypairPolicySpec
}

func (CreateKeypairPolicy) CommandName() string { return "keypair-policy.create" }

type createKeypairPolicyHandler struct {
	keypairPolicies repository[*domain.KeypairPolicy]
	clock
}

// newCreateKeypairPolicyHandler builds the handler over what it uses.
func newCreateKeypairPolicyHandler(keypairPolicies repository[*domain.KeypairPolicy], now clock) createKeypairPolicyHandler {
	return createKeypairPolicyHandler{keypairPolicies: keypairPolicies, clock: now}
}

// Handle creates the policy's stream; a policy of that name is
// KindConflict.
func (h createKeypairPolicyHandler) Handle(ctx context.Context, md Metadata, cmd CreateKeypairPolicy) (Result, error) {
	const op = "keypair-policy.create"
	if err := firstError(authorizeGlobal(op, cmd.Actor), domain.CheckName(op, "name", cmd.Name)); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.keypairPolicies.update(ctx, domain.KeypairPolicyStream(cmd.Name), md, func(p *domain.KeypairPolicy) ([]domain.Event, error) {
		return p.Create(cmd.Name, cmd.Spec, at)
	})
	return result(pos, err)
}
