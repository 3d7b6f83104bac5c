package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// IssueKeypair gives a user a new keypair with a keypair resource policy.
// Main makes it the user's main keypair; a user without a main keypair
// gets this one as main anyway.
type IssueKeypair struct {
	Actor  Principal
	UserID uuid.UUID
	// ResourcePolicy names the keypair policy; "" takes the run-time
	// setting keypair.default_resource_policy.
	ResourcePolicy string
	RateLimit      int
	Main           bool
}

func (IssueKeypair) CommandName() string { return "keypair.issue" }

// IssueKeypairResult carries the new keys. The secret key is shown to the
// caller here and never again by any query but the signature verifier's
// lookup.
type IssueKeypairResult struct {
	AccessKey string
	SecretKey string
	// Main reports whether the keypair became the user's main keypair.
	Main     bool
	Position uint64
}

type issueKeypairHandler struct {
	users           repository[*domain.User]
	keypairs        repository[*domain.Keypair]
	keypairPolicies repository[*domain.KeypairPolicy]
	settings        settingsSource
	clock
}

// newIssueKeypairHandler builds the handler over what it uses.
func newIssueKeypairHandler(users repository[*domain.User], keypairs repository[*domain.Keypair], keypairPolicies repository[*domain.KeypairPolicy], settings settingsSource, now clock) issueKeypairHandler {
	return issueKeypairHandler{users: users, keypairs: keypairs, keypairPolicies: keypairPolicies, settings: settings, clock: now}
}

// Handle checks the user (exists, not deleted, the actor may act on it)
// and the policy, generates the keys (crypto/rand), creates the keypair's
// stream, then records it on the user as main if asked or if the user had
// none. A crash between the two appends leaves a keypair that is not
// main; SetMainKeypair (or the next IssueKeypair) sets it.
func (h issueKeypairHandler) Handle(ctx context.Context, md Metadata, cmd IssueKeypair) (IssueKeypairResult, error) {
	const op = "keypair.issue"
	u, err := h.users.load(ctx, domain.UserStream(cmd.UserID))
	if err != nil {
		return IssueKeypairResult{}, err
	}
	if err := authorizeOnUser(op, cmd.Actor, u.agg); err != nil {
		return IssueKeypairResult{}, err
	}
	if err := u.agg.RequireLive(op); err != nil {
		return IssueKeypairResult{}, err
	}
	if cmd.ResourcePolicy == "" {
		// The run-time setting names the policy of a request that names
		// none; without it the request must name one.
		if cmd.ResourcePolicy, err = h.settings.value(ctx, domain.SettingKeypairDefaultPolicy); err != nil {
			return IssueKeypairResult{}, err
		}
		if cmd.ResourcePolicy == "" {
			return IssueKeypairResult{}, domain.Invalid(op, "resource_policy", "required (no default keypair policy is set)")
		}
	}
	if err := requirePolicy(ctx, h.keypairPolicies, op, "resource_policy", domain.KeypairPolicyStream(cmd.ResourcePolicy), cmd.ResourcePolicy); err != nil {
		return IssueKeypairResult{}, err
	}
	access, err := newAccessKey()
	if err != nil {
		return IssueKeypairResult{}, keyError(op, err)
	}
	secret, err := newSecretKey()
	if err != nil {
		return IssueKeypairResult{}, keyError(op, err)
	}
	at := h.now()
	spec := domain.KeypairSpec{AccessKey: access, SecretKey: secret, UserID: cmd.UserID, Domain: u.agg.Domain(),
		ResourcePolicy: cmd.ResourcePolicy, RateLimit: cmd.RateLimit}
	_, pos, err := h.keypairs.update(ctx, domain.KeypairStream(access), md, func(k *domain.Keypair) ([]domain.Event, error) {
		return k.Issue(spec, at)
	})
	if err != nil {
		return IssueKeypairResult{}, err
	}
	out := IssueKeypairResult{AccessKey: access, SecretKey: secret, Position: pos}
	user, upos, err := h.users.update(ctx, domain.UserStream(cmd.UserID), md, func(u *domain.User) ([]domain.Event, error) {
		if !cmd.Main && u.MainAccessKey() != "" {
			return nil, nil
		}
		return u.SetMainKeypair(access, at)
	})
	if err != nil {
		return out, err
	}
	out.Main = user.MainAccessKey() == access
	out.Position = max(pos, upos)
	return out, nil
}
