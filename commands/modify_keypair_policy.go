package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// ModifyKeypairPolicy changes a keypair resource policy's limits
// (superadmins only). The new limits apply to every keypair with the
// policy from the next scheduling decision on.
type ModifyKeypairPolicy struct {
	Actor   Principal
	Name    string
	Changes domain.KeypairPolicyChanges
}

func (ModifyKeypairPolicy) CommandName() string { return "keypair-policy.modify" }

type modifyKeypairPolicyHandler struct {
	keypairPolicies repository[*domain.KeypairPolicy]
	clock
}

// newModifyKeypairPolicyHandler builds the handler over what it uses.
func newModifyKeypairPolicyHandler(keypairPolicies repository[*domain.KeypairPolicy], now clock) modifyKeypairPolicyHandler {
	return modifyKeypairPolicyHandler{keypairPolicies: keypairPolicies, clock: now}
}

// Handle applies the changes (domain.KeypairPolicy.Modify).
func (h modifyKeypairPolicyHandler) Handle(ctx context.Context, md Metadata, cmd ModifyKeypairPolicy) (Result, error) {
	const op = "keypair-policy.modify"
	if err := firstError(authorizeGlobal(op, cmd.Actor), domain.CheckName(op, "name", cmd.Name)); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.keypairPolicies.update(ctx, domain.KeypairPolicyStream(cmd.Name), md, func(p *domain.KeypairPolicy) ([]domain.Event, error) {
		return p.Modify(cmd.Changes, at)
	})
	return result(pos, err)
}
