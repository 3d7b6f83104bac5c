package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// SetMainKeypair makes one of a user's active keypairs its main keypair,
// whose policy is the user's per-user limit.
type SetMainKeypair struct {
	Actor     Principal
	UserID    uuid.UUID
	AccessKey string
}

func (SetMainKeypair) CommandName() string { return "user.set-main-keypair" }

type setMainKeypairHandler struct {
	keypairLookup
	clock
}

// newSetMainKeypairHandler builds the handler over what it uses.
func newSetMainKeypairHandler(keypairLookup keypairLookup, now clock) setMainKeypairHandler {
	return setMainKeypairHandler{keypairLookup: keypairLookup, clock: now}
}

// Handle checks that the keypair is the user's and active, then records
// it on the user (domain.User.SetMainKeypair).
func (h setMainKeypairHandler) Handle(ctx context.Context, md Metadata, cmd SetMainKeypair) (Result, error) {
	const op = "user.set-main-keypair"
	k, owner, err := h.keypairOf(ctx, op, cmd.Actor, cmd.AccessKey, false)
	if err != nil {
		return Result{}, err
	}
	switch {
	case k.agg.UserID() != cmd.UserID:
		return Result{}, domain.Invalid(op, "access_key", "the keypair is not the user's")
	case !k.agg.IsActive():
		return Result{}, domain.Errorf(op, domain.KindConflict, "the keypair is inactive")
	}
	if err := owner.RequireLive(op); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.users.update(ctx, domain.UserStream(cmd.UserID), md, func(u *domain.User) ([]domain.Event, error) {
		return u.SetMainKeypair(cmd.AccessKey, at)
	})
	return result(pos, err)
}
