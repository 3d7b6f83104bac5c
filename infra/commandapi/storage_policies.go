package commandapi

import (
	"context"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

// storagePolicyScope is one of the two kinds of storage policies (user
// and project resource policies: folder count and quota), which share
// their routes' shape: /v1/user-policies and /v1/project-policies (their
// queries are readapi's).
type storagePolicyScope struct {
	path string // route segment
	kind string // op prefix
	// create and modify run the scope's command.
	create func(*api, context.Context, commands.Metadata, commands.Principal, string, domain.StoragePolicySpec) (commands.Result, error)
	modify func(*api, context.Context, commands.Metadata, commands.Principal, string, domain.StoragePolicyChanges) (commands.Result, error)
}

var (
	userPolicies = storagePolicyScope{
		path: "user-policies", kind: "user-policy",
		create: func(a *api, ctx context.Context, md commands.Metadata, p commands.Principal, name string, s domain.StoragePolicySpec) (commands.Result, error) {
			return a.Commands.CreateUserPolicy.Handle(ctx, md, commands.CreateUserPolicy{Actor: p, Name: name, Spec: s})
		},
		modify: func(a *api, ctx context.Context, md commands.Metadata, p commands.Principal, name string, ch domain.StoragePolicyChanges) (commands.Result, error) {
			return a.Commands.ModifyUserPolicy.Handle(ctx, md, commands.ModifyUserPolicy{Actor: p, Name: name, Changes: ch})
		},
	}
	projectPolicies = storagePolicyScope{
		path: "project-policies", kind: "project-policy",
		create: func(a *api, ctx context.Context, md commands.Metadata, p commands.Principal, name string, s domain.StoragePolicySpec) (commands.Result, error) {
			return a.Commands.CreateProjectPolicy.Handle(ctx, md, commands.CreateProjectPolicy{Actor: p, Name: name, Spec: s})
		},
		modify: func(a *api, ctx context.Context, md commands.Metadata, p commands.Principal, name string, ch domain.StoragePolicyChanges) (commands.Result, error) {
			return a.Commands.ModifyProjectPolicy.Handle(ctx, md, commands.ModifyProjectPolicy{Actor: p, Name: name, Changes: ch})
		},
	}
)
