package commands

import (
	"context"
	"errors"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/google/uuid"
)

// CreateUser creates a user in a domain with a password (superadmins, and
// admins of that domain for roles other than superadmin). Spec.ID and
// Spec.PasswordHash are set by the handler.
type CreateUser struct {
	Actor    Principal
	Spec     domain.UserSpec
	Password string
}

func (CreateUser) CommandName() string { return "user.create" }

// CreateUserResult names the new user.
type CreateUserResult struct {
	UserID   uuid.UUID
	Position uint64
}

type createUserHandler struct {
	domains      repository[*domain.Domain]
	users        repository[*domain.User]
	emails       repository[*domain.EmailReservation]
	userPolicies repository[*domain.StoragePolicy]
	newID        func() uuid.UUID
	grace        time.Duration
	passwords
	clock
}

// newCreateUserHandler builds the handler over what it uses.
func newCreateUserHandler(domains repository[*domain.Domain], users repository[*domain.User], emails repository[*domain.EmailReservation], userPolicies repository[*domain.StoragePolicy], newID func() uuid.UUID, grace time.Duration, passwords passwords, now clock) createUserHandler {
	return createUserHandler{domains: domains, users: users, emails: emails, userPolicies: userPolicies, newID: newID, grace: grace, passwords: passwords, clock: now}
}

var errEmailInUse = domain.Errorf("user.create", domain.KindConflict, "the e-mail address is already in use")

// Handle validates the request, checks the domain (exists, active) and
// the user policy, hashes the password, then writes two streams, one
// after the other (see domain.EmailReservation for the protocol):
//
//  1. the e-mail reservation user-email-<address> names a fresh user id
//     (or, for a retry of the same request, the id it reserved before);
//  2. the user's stream user-<id> gets user.created.
//
// A crash between the two leaves a reservation without a user: sending
// the same request again (same request id in the metadata) completes it
// with the reserved id; any other request for the address takes the
// reservation over once it is older than Options.EmailReservationGrace,
// after closing the reserved id's user stream so that the first creation
// can never complete late. Until then a second request for the address is
// KindConflict, as it is once the user exists. A repeat of a request that
// completed returns the same user id without appending anything.
//
// E-mail addresses are unique across domains, so a conflict tells a
// domain admin that the address is used somewhere: the price of global
// uniqueness, as in Backend.AI.
func (h createUserHandler) Handle(ctx context.Context, md Metadata, cmd CreateUser) (CreateUserResult, error) {
	const op = "user.create"
	spec := cmd.Spec
	if err := authorizeIn(op, "domain", cmd.Actor, spec.Domain); err != nil {
		return CreateUserResult{}, err
	}
	if err := forbidReservedGrant(op, cmd.Actor, spec.Role); err != nil {
		return CreateUserResult{}, err
	}
	at := h.now()
	// Decide once up front (pure) so that a bad request costs no hashing
	// and writes nothing.
	probe := spec
	probe.ID, probe.PasswordHash = uuid.Max, "probe"
	blank, err := domain.RehydrateUser(nil)
	if err != nil {
		return CreateUserResult{}, err
	}
	if _, err := blank.Create(probe, at); err != nil {
		return CreateUserResult{}, errors.Join(err, checkPassword(op, "password", cmd.Password))
	}
	if err := checkPassword(op, "password", cmd.Password); err != nil {
		return CreateUserResult{}, err
	}
	d, err := h.domains.load(ctx, domain.DomainStream(spec.Domain))
	if err != nil {
		return CreateUserResult{}, err
	}
	if err := d.agg.RequireActive(op); err != nil {
		return CreateUserResult{}, err
	}
	if err := requirePolicy(ctx, h.userPolicies, op, "resource_policy", domain.UserPolicyStream(spec.ResourcePolicy), spec.ResourcePolicy); err != nil {
		return CreateUserResult{}, err
	}
	if spec.PasswordHash, err = h.hash(op, "password", cmd.Password); err != nil {
		return CreateUserResult{}, err
	}

	if spec.ID, err = h.claimEmail(ctx, md, spec.Email, at); err != nil {
		return CreateUserResult{}, err
	}
	_, pos, err := h.users.update(ctx, domain.UserStream(spec.ID), md, func(u *domain.User) ([]domain.Event, error) {
		if u.Exists() {
			if u.Domain() != spec.Domain || domain.EmailKey(u.Email()) != domain.EmailKey(spec.Email) {
				return nil, errEmailInUse
			}
			return nil, nil // created by an earlier try of this request
		}
		return u.Create(spec, at)
	})
	if err != nil {
		return CreateUserResult{}, err
	}
	return CreateUserResult{UserID: spec.ID, Position: pos}, nil
}

// claimEmail reserves the address and returns the user id it is reserved
// for: a fresh one, the one an earlier try of the same request reserved,
// or a fresh one that took over an abandoned reservation.
func (h createUserHandler) claimEmail(ctx context.Context, md Metadata, email string, at time.Time) (uuid.UUID, error) {
	stream := domain.UserEmailStream(email)
	wait := h.emails.retry.newBackOff(ctx)
	for attempt := 1; ; attempt++ {
		l, err := h.emails.load(ctx, stream)
		if err != nil {
			return uuid.Nil, err
		}
		r := l.agg
		if r.Exists() && md.RequestID != "" && r.RequestID() == md.RequestID {
			return r.UserID(), nil
		}
		id := h.newID()
		var events []domain.Event
		if !r.Exists() {
			events, err = r.Reserve(email, id, md.RequestID, at)
		} else {
			if err := h.abandonReserved(ctx, md, r, email, at); err != nil {
				if errors.Is(err, eventstore.ErrWrongExpectedRevision) && attempt < h.users.retry.attempts {
					continue // the reserved user's stream moved: look again
				}
				return uuid.Nil, err
			}
			events, err = r.TakeOver(r.UserID(), email, id, md.RequestID, at)
		}
		if err != nil {
			return uuid.Nil, err
		}
		_, err = h.emails.appendAt(ctx, stream, l, md, events)
		switch {
		case err == nil:
			return id, nil
		case !errors.Is(err, eventstore.ErrWrongExpectedRevision):
			return uuid.Nil, err
		case attempt >= h.emails.retry.attempts:
			return uuid.Nil, errEmailInUse
		}
		if werr := waitNext(ctx, wait); werr != nil {
			return uuid.Nil, storeError("user.create", werr)
		}
	}
}

// abandonReserved makes sure the user id an existing reservation names
// will never get a user, so the reservation may be taken over: it is
// errEmailInUse when that user exists or the reservation is too young
// (its creation is probably under way), and closes the user's stream
// otherwise.
func (h createUserHandler) abandonReserved(ctx context.Context, md Metadata, r *domain.EmailReservation, email string, at time.Time) error {
	owner, err := h.users.load(ctx, domain.UserStream(r.UserID()))
	if err != nil {
		return err
	}
	switch u := owner.agg; {
	case u.Exists():
		return errEmailInUse
	case u.Abandoned():
		return nil
	case at.Sub(r.ReservedAt()) < h.grace:
		return errEmailInUse
	}
	events, err := owner.agg.Abandon(r.UserID(), email, at)
	if err != nil {
		return err
	}
	_, err = h.users.appendAt(ctx, domain.UserStream(r.UserID()), owner, md, events)
	return err
}
