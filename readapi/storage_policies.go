package readapi

import (
	"context"

	"github.com/cairnhq/cairn/projections/tenancy"
)

// storagePolicyScope is one of the two kinds of storage policies (user
// and project resource policies: folder count and quota), which share
// their routes' shape: /v1/user-policies and /v1/project-policies
// (infra/commandapi has the commands of each).
type storagePolicyScope struct {
	path string // route segment
	kind string // op prefix
	list func(*api, context.Context) ([]tenancy.StoragePolicy, error)
	get  func(*api, context.Context, string) (tenancy.StoragePolicy, error)
}

var (
	userPolicies = storagePolicyScope{
		path: "user-policies", kind: "user-policy",
		list: func(a *api, ctx context.Context) ([]tenancy.StoragePolicy, error) {
			return a.Tenancy.ListUserPolicies(ctx)
		},
		get: func(a *api, ctx context.Context, name string) (tenancy.StoragePolicy, error) {
			return a.Tenancy.GetUserPolicy(ctx, name)
		},
	}
	projectPolicies = storagePolicyScope{
		path: "project-policies", kind: "project-policy",
		list: func(a *api, ctx context.Context) ([]tenancy.StoragePolicy, error) {
			return a.Tenancy.ListProjectPolicies(ctx)
		},
		get: func(a *api, ctx context.Context, name string) (tenancy.StoragePolicy, error) {
			return a.Tenancy.GetProjectPolicy(ctx, name)
		},
	}
)
