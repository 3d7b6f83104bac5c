package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// ModifyDomain changes a domain's description, total resource slots,
// allowed storage hosts or is_active (superadmins only).
type ModifyDomain struct {
	Actor   Principal
	Name    string
	Changes domain.DomainChanges
}

func (ModifyDomain) CommandName() string { return "domain.modify" }

type modifyDomainHandler struct {
	domains repository[*domain.Domain]
	clock
}

// newModifyDomainHandler builds the handler over what it uses.
func newModifyDomainHandler(domains repository[*domain.Domain], now clock) modifyDomainHandler {
	return modifyDomainHandler{domains: domains, clock: now}
}

// Handle applies the changes (domain.Domain.Modify); changes that change
// nothing append nothing.
func (h modifyDomainHandler) Handle(ctx context.Context, md Metadata, cmd ModifyDomain) (Result, error) {
	const op = "domain.modify"
	if err := authorizeGlobal(op, cmd.Actor); err != nil {
		// Another domain's existence is not the caller's business.
		if cmd.Actor.Domain != cmd.Name {
			return Result{}, domain.NotFound(op, "domain")
		}
		return Result{}, err
	}
	if err := domain.CheckName(op, "name", cmd.Name); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.domains.update(ctx, domain.DomainStream(cmd.Name), md, func(d *domain.Domain) ([]domain.Event, error) {
		return d.Modify(cmd.Changes, at)
	})
	return result(pos, err)
}
