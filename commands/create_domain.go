package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
)

// CreateDomain creates a domain (superadmins only).
type CreateDomain struct {
	Actor Principal
	Spec  domain.DomainSpec
}

func (CreateDomain) CommandName() string { return "domain.create" }

type createDomainHandler struct {
	domains repository[*domain.Domain]
	clock
}

// newCreateDomainHandler builds the handler over what it uses.
func newCreateDomainHandler(domains repository[*domain.Domain], now clock) createDomainHandler {
	return createDomainHandler{domains: domains, clock: now}
}

// Handle creates the domain's stream; a domain of that name is
// KindConflict (the stream's expected revision, "no stream", decides
// between two concurrent creations).
func (h createDomainHandler) Handle(ctx context.Context, md Metadata, cmd CreateDomain) (Result, error) {
	const op = "domain.create"
	if err := authorizeGlobal(op, cmd.Actor); err != nil {
		return Result{}, err
	}
	if err := domain.CheckName(op, "name", cmd.Spec.Name); err != nil {
		return Result{}, err
	}
	at := h.now()
	_, pos, err := h.domains.update(ctx, domain.DomainStream(cmd.Spec.Name), md, func(d *domain.Domain) ([]domain.Event, error) {
		return d.Create(cmd.Spec, at)
	})
	return result(pos, err)
}
