package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// GrantResourceGroupAccess lets the sessions of a domain, a project
// ("<domain>/<name>") or a keypair use a resource group (superadmins
// only).
type GrantResourceGroupAccess struct {
	Actor         Principal
	ResourceGroup string
	Grantee       domain.Grantee
}

func (GrantResourceGroupAccess) CommandName() string { return "resource-group.grant" }

type grantResourceGroupAccessHandler struct {
	domains        repository[*domain.Domain]
	projects       repository[*domain.Project]
	keypairs       repository[*domain.Keypair]
	resourceGroups repository[*domain.ResourceGroup]
	clock
}

// newGrantResourceGroupAccessHandler builds the handler over what it uses.
func newGrantResourceGroupAccessHandler(domains repository[*domain.Domain], projects repository[*domain.Project], keypairs repository[*domain.Keypair], resourceGroups repository[*domain.ResourceGroup], now clock) grantResourceGroupAccessHandler {
	return grantResourceGroupAccessHandler{domains: domains, projects: projects, keypairs: keypairs, resourceGroups: resourceGroups, clock: now}
}

// Handle checks that the grantee exists, then records the grant; granting
// again appends nothing. A grantee that disappears later keeps its entry
// (domains and projects are deactivated, not deleted; a keypair is
// deactivated), harmless since it can no longer start sessions.
func (h grantResourceGroupAccessHandler) Handle(ctx context.Context, md Metadata, cmd GrantResourceGroupAccess) (Result, error) {
	const op = "resource-group.grant"
	if err := firstError(authorizeGlobal(op, cmd.Actor), domain.CheckName(op, "resource_group", cmd.ResourceGroup), cmd.Grantee.Check(op)); err != nil {
		return Result{}, err
	}
	if err := h.requireGrantee(ctx, op, cmd.Grantee); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.resourceGroups.update(ctx, domain.ResourceGroupStream(cmd.ResourceGroup), md, func(r *domain.ResourceGroup) ([]domain.Event, error) {
		return r.Grant(cmd.Grantee, at)
	})
	return result(pos, err)
}

func (h grantResourceGroupAccessHandler) requireGrantee(ctx context.Context, op string, g domain.Grantee) error {
	var (
		exists bool
		err    error
	)
	switch g.Kind {
	case domain.GranteeDomain:
		var l loaded[*domain.Domain]
		l, err = h.domains.load(ctx, domain.DomainStream(g.Name))
		exists = l.agg != nil && l.agg.Exists()
	case domain.GranteeProject:
		d, p, _ := domain.SplitProjectKey(g.Name)
		var l loaded[*domain.Project]
		l, err = h.projects.load(ctx, domain.ProjectStream(d, p))
		exists = l.agg != nil && l.agg.Exists()
	case domain.GranteeKeypair:
		var l loaded[*domain.Keypair]
		l, err = h.keypairs.load(ctx, domain.KeypairStream(g.Name))
		exists = l.agg != nil && l.agg.Exists()
	}
	if err != nil {
		return err
	}
	if !exists {
		return domain.NotFound(op, string(g.Kind))
	}
	return nil
}
