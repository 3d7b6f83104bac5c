package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// ModifyUser changes a user's username, full name, role, status, user
// resource policy or password. Changes.PasswordHash is ignored: a new
// password comes in Password and is hashed by the handler.
type ModifyUser struct {
	Actor    Principal
	UserID   uuid.UUID
	Changes  domain.UserChanges
	Password *string
}

func (ModifyUser) CommandName() string { return "user.modify" }

type modifyUserHandler struct {
	users        repository[*domain.User]
	userPolicies repository[*domain.StoragePolicy]
	passwords
	clock
}

// newModifyUserHandler builds the handler over what it uses.
func newModifyUserHandler(users repository[*domain.User], userPolicies repository[*domain.StoragePolicy], passwords passwords, now clock) modifyUserHandler {
	return modifyUserHandler{users: users, userPolicies: userPolicies, passwords: passwords, clock: now}
}

// Handle authorizes the actor on the user as loaded (its domain, and
// whether it is a superadmin), checks a newly named policy, hashes a new
// password, and applies the changes (domain.User.Modify), authorizing
// again on the user as it is when the change is decided.
func (h modifyUserHandler) Handle(ctx context.Context, md Metadata, cmd ModifyUser) (Result, error) {
	const op = "user.modify"
	ch := cmd.Changes
	ch.PasswordHash = nil
	authorize := func(u *domain.User) error {
		if err := authorizeOnUser(op, cmd.Actor, u); err != nil {
			return err
		}
		if ch.Role != nil {
			return forbidReservedGrant(op, cmd.Actor, *ch.Role)
		}
		return nil
	}
	l, err := h.users.load(ctx, domain.UserStream(cmd.UserID))
	if err != nil {
		return Result{}, err
	}
	if err := authorize(l.agg); err != nil {
		return Result{}, err
	}
	if p := ch.ResourcePolicy; p != nil {
		if err := requirePolicy(ctx, h.userPolicies, op, "resource_policy", domain.UserPolicyStream(*p), *p); err != nil {
			return Result{}, err
		}
	}
	if cmd.Password != nil {
		hash, err := h.hash(op, "password", *cmd.Password)
		if err != nil {
			return Result{}, err
		}
		ch.PasswordHash = &hash
	}
	at := h.now()
	_, pos, err := h.users.update(ctx, domain.UserStream(cmd.UserID), md, func(u *domain.User) ([]domain.Event, error) {
		if err := authorize(u); err != nil {
			return nil, err
		}
		return u.Modify(ch, at)
	})
	return result(pos, err)
}
