package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// ModifyKeypair changes a keypair's resource policy or rate limit.
type ModifyKeypair struct {
	Actor          Principal
	AccessKey      string
	ResourcePolicy *string
	RateLimit      *int
}

func (ModifyKeypair) CommandName() string { return "keypair.modify" }

type modifyKeypairHandler struct {
	keypairPolicies repository[*domain.KeypairPolicy]
	keypairLookup
	clock
}

// newModifyKeypairHandler builds the handler over what it uses.
func newModifyKeypairHandler(keypairPolicies repository[*domain.KeypairPolicy], keypairLookup keypairLookup, now clock) modifyKeypairHandler {
	return modifyKeypairHandler{keypairPolicies: keypairPolicies, keypairLookup: keypairLookup, clock: now}
}

// Handle checks a newly named policy and applies the changes
// (domain.Keypair.Modify).
func (h modifyKeypairHandler) Handle(ctx context.Context, md Metadata, cmd ModifyKeypair) (Result, error) {
	const op = "keypair.modify"
	if _, _, err := h.keypairOf(ctx, op, cmd.Actor, cmd.AccessKey, false); err != nil {
		return Result{}, err
	}
	if p := cmd.ResourcePolicy; p != nil {
		if *p == "" {
			return Result{}, domain.Invalid(op, "resource_policy", "required")
		}
		if err := requirePolicy(ctx, h.keypairPolicies, op, "resource_policy", domain.KeypairPolicyStream(*p), *p); err != nil {
			return Result{}, err
		}
	}
	at := h.now()
	_, pos, err := h.keypairs.update(ctx, domain.KeypairStream(cmd.AccessKey), md, func(k *domain.Keypair) ([]domain.Event, error) {
		return k.Modify(domain.KeypairChanges{ResourcePolicy: cmd.ResourcePolicy, RateLimit: cmd.RateLimit}, at)
	})
	return result(pos, err)
}
