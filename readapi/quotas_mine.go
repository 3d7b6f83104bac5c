package readapi

import (
	"slices"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/quota"
	"github.com/cairnhq/cairn/projections/occupancy"
)

const opMyQuotas = "quota.mine"

// quotaLevel is what one level of limits holds of the caller's: what its
// sessions occupy against the limit at that level.
type quotaLevel struct {
	// Scope is keypair (the key the request came with), user (the policy
	// of the user's main keypair), project or domain.
	Scope   quota.Scope `json:"scope"`
	Subject string      `json:"subject"`
	// Limits are the total_resource_slots at that level; a slot it does
	// not name is unlimited unless OthersLimited (keypair and user
	// levels whose policy says default_for_unspecified: limited). No
	// limit at all is an empty object.
	Limits        domain.Slots `json:"limits"`
	OthersLimited bool         `json:"others_limited"`
	// Occupied is what the level's running sessions hold, Concurrent and
	// Pending how many sessions run or wait there.
	Occupied     domain.Slots `json:"occupied"`
	Concurrent   int          `json:"concurrent_sessions"`
	Pending      int          `json:"pending_sessions"`
	PendingSlots domain.Slots `json:"pending_slots"`
	// MaxConcurrent and MaxPending are the policy's session counts (0: no
	// limit; keypair and user levels only).
	MaxConcurrent int `json:"max_concurrent_sessions"`
	MaxPending    int `json:"max_pending_sessions"`
}

// myQuotasResponse is the answer of GET /v1/quotas/mine.
type myQuotasResponse struct {
	Project string       `json:"project"`
	Levels  []quotaLevel `json:"levels"`
}

// myQuotas handles GET /v1/quotas/mine?project=: the caller's use against
// each level of limits a session of theirs meets (keypair, user, the
// project, the domain), read from the occupancy and tenancy read models as
// the admission check reads them. project defaults to the caller's first
// project; one they are not a member of is 404.
func (a *api) myQuotas(c *fiber.Ctx) error {
	who, err := a.Reading(c, opMyQuotas)
	if err != nil {
		return err
	}
	project := c.Query("project")
	switch {
	case project == "" && len(who.Projects) > 0:
		project = who.Projects[0]
	case project != "" && !slices.Contains(who.Projects, project):
		return domain.NotFound(opMyQuotas, "project")
	}
	ctx := c.UserContext()
	st, err := occupancy.Standings{Tenancy: a.Tenancy, Occupancy: a.Occupancy}.Standing(ctx,
		domain.Owner{UserID: who.UserID, AccessKey: who.AccessKey}, who.Domain, project)
	if err != nil {
		return err
	}
	level := func(scope quota.Scope, key string, limits domain.Slots, policy *domain.KeypairPolicySpec) (quotaLevel, error) {
		o, err := a.Occupancy.Of(ctx, scope, key)
		if err != nil {
			return quotaLevel{}, err
		}
		l := quotaLevel{Scope: scope, Subject: key, Limits: nonNilSlots(limits), Occupied: nonNilSlots(o.Occupied),
			Concurrent: o.Concurrent, Pending: o.Pending, PendingSlots: nonNilSlots(o.PendingSlots)}
		if policy != nil {
			l.Limits = nonNilSlots(policy.TotalResourceSlots)
			l.OthersLimited = policy.DefaultForUnspecified == domain.UnspecifiedLimited
			l.MaxConcurrent, l.MaxPending = policy.MaxConcurrentSessions, policy.MaxPendingSessionCount
		}
		return l, nil
	}
	out := myQuotasResponse{Project: project}
	wanted := []struct {
		scope  quota.Scope
		key    string
		limits domain.Slots
		policy *domain.KeypairPolicySpec
		skip   bool
	}{
		{quota.ScopeKeypair, who.AccessKey, nil, st.Keypair, who.AccessKey == ""},
		{quota.ScopeUser, who.UserID, nil, st.User, who.ID == uuid.Nil},
		{quota.ScopeProject, domain.ProjectKey(who.Domain, project), st.Project, nil, project == ""},
		{quota.ScopeDomain, who.Domain, st.Domain, nil, false},
	}
	for _, w := range wanted {
		if w.skip {
			continue
		}
		l, err := level(w.scope, w.key, w.limits, w.policy)
		if err != nil {
			return err
		}
		out.Levels = append(out.Levels, l)
	}
	return c.JSON(out)
}
