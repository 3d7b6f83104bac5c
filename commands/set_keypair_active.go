package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// SetKeypairActive activates or deactivates a keypair. A deactivated
// keypair signs nothing.
type SetKeypairActive struct {
	Actor     Principal
	AccessKey string
	Active    bool
}

func (SetKeypairActive) CommandName() string { return "keypair.set-active" }

type setKeypairActiveHandler struct {
	keypairLookup
	clock
}

// newSetKeypairActiveHandler builds the handler over what it uses.
func newSetKeypairActiveHandler(keypairLookup keypairLookup, now clock) setKeypairActiveHandler {
	return setKeypairActiveHandler{keypairLookup: keypairLookup, clock: now}
}

// Handle records keypair.activated or keypair.deactivated; the state the
// keypair is already in appends nothing. The owner's main keypair cannot
// be deactivated (KindConflict): its policy is the owner's per-user limit,
// so another one must be made main first.
func (h setKeypairActiveHandler) Handle(ctx context.Context, md Metadata, cmd SetKeypairActive) (Result, error) {
	const op = "keypair.set-active"
	_, owner, err := h.keypairOf(ctx, op, cmd.Actor, cmd.AccessKey, false)
	if err != nil {
		return Result{}, err
	}
	if !cmd.Active && owner.MainAccessKey() == cmd.AccessKey {
		return Result{}, domain.Errorf(op, domain.KindConflict, "the user's main keypair cannot be deactivated; make another keypair main first")
	}
	at := h.now()
	_, pos, err := h.keypairs.update(ctx, domain.KeypairStream(cmd.AccessKey), md, func(k *domain.Keypair) ([]domain.Event, error) {
		return k.Modify(domain.KeypairChanges{IsActive: &cmd.Active}, at)
	})
	return result(pos, err)
}
