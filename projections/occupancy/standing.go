package occupancy

import (
	"context"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/quota"
	"github.com/cairnhq/cairn/projections/tenancy"
)

// Standings tells commands.RequestSession what is known of a new
// session's limits (quota.Standing) from the read models: the keypair's
// policy, the user's main keypair's policy, the project's and the domain's
// total_resource_slots (tenancy), and the keypair's pending sessions (this
// read model). Both may lag behind the log by what the projectors have
// not applied yet; see commands.QuotaSource for what that allows.
type Standings struct {
	Tenancy   *tenancy.ReadModel
	Occupancy *ReadModel
}

// Standing implements commands.QuotaSource. Objects the tenancy read
// model does not know (a keypair, a user, a project without a record)
// limit nothing; any other failure is returned.
func (s Standings) Standing(ctx context.Context, owner domain.Owner, domainName, project string) (quota.Standing, error) {
	var st quota.Standing
	policyOf := func(accessKey string) (*domain.KeypairPolicySpec, error) {
		kp, err := s.Tenancy.GetKeypair(ctx, accessKey)
		if err != nil {
			return nil, err
		}
		p, err := s.Tenancy.GetKeypairPolicy(ctx, kp.ResourcePolicy)
		if err != nil {
			return nil, err
		}
		return &p.KeypairPolicySpec, nil
	}
	var err error
	if st.Keypair, err = policyOf(owner.AccessKey); absent(err) != nil {
		return quota.Standing{}, err
	}
	if id, perr := uuid.Parse(owner.UserID); perr == nil {
		u, err := s.Tenancy.GetUser(ctx, id)
		switch {
		case absent(err) != nil:
			return quota.Standing{}, err
		case err == nil && u.MainAccessKey == owner.AccessKey:
			st.User = st.Keypair
		case err == nil && u.MainAccessKey != "":
			if st.User, err = policyOf(u.MainAccessKey); absent(err) != nil {
				return quota.Standing{}, err
			}
		}
	}
	switch p, err := s.Tenancy.GetProject(ctx, domainName, project); {
	case absent(err) != nil:
		return quota.Standing{}, err
	case err == nil:
		st.Project = p.TotalResourceSlots
	}
	switch d, err := s.Tenancy.GetDomain(ctx, domainName); {
	case absent(err) != nil:
		return quota.Standing{}, err
	case err == nil:
		st.Domain = d.TotalResourceSlots
	}
	o, err := s.Occupancy.Of(ctx, quota.ScopeKeypair, owner.AccessKey)
	if err != nil {
		return quota.Standing{}, err
	}
	st.Pending, st.PendingSlots = o.Pending, o.PendingSlots
	return st, nil
}

// absent drops a not-found error: what the read model does not know
// limits nothing.
func absent(err error) error {
	if domain.KindOf(err) == domain.KindNotFound {
		return nil
	}
	return err
}
