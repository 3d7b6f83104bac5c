package commandapi

import (
	"errors"
	"slices"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/images"
)

// checkSessionScope checks a session request against the tenancy read
// model and completes it, each refusal naming its field:
//
//   - project: users must belong to it (403); admins and superadmins may
//     use any project of their domain, which must exist (400); an inactive
//     project takes no sessions (403).
//   - resource_group: the group must be one the domain, project or
//     keypair may use (projections/tenancy AllowedResourceGroups) and
//     allow the session's type; one that does not exist is 400, one that
//     is not allowed 403. When none is named, the first allowed one that
//     takes the session's type is used.
//
// (The image is checked with the body, see imageKnown.)
//
// The owner's access key is required: sessions are accounted to a
// keypair (403 without one).
func (a *api) checkSessionScope(c *fiber.Ctx, who caller, spec *domain.SessionSpec) error {
	const op = opCreateSession
	ctx := c.UserContext()
	if who.AccessKey == "" {
		return &domain.Error{Op: op, Kind: domain.KindForbidden, Field: "owner.access_key",
			Message: "the caller has no keypair to account the session to; an admin issues one"}
	}
	if spec.Project == "" {
		spec.Project = defaultScope
	}
	if err := domain.CheckName(op, "project", spec.Project); err != nil {
		return err
	}
	if !who.IsSuperadmin() && who.Role != readapi.RoleAdmin && !who.MemberOf(spec.Project) {
		msg := "not a member of project " + spec.Project + " of domain " + who.Domain
		if spec.Project == defaultScope {
			// The usual surprise: the field was left out.
			msg += ` (a session without "project" goes to "` + defaultScope + `"; name one of your projects)`
		}
		return &domain.Error{Op: op, Kind: domain.KindForbidden, Field: "project", Message: msg}
	}
	p, err := a.Tenancy.GetProject(ctx, who.Domain, spec.Project)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return domain.Invalid(op, "project", "no project %q in domain %q", spec.Project, who.Domain)
	case err != nil:
		return err
	case !p.IsActive:
		return &domain.Error{Op: op, Kind: domain.KindForbidden, Field: "project", Message: "project " + spec.Project + " is inactive"}
	}
	return a.chooseResourceGroup(c, who, spec)
}

// imageKnown reports whether an image is in the registry, exactly or with
// its implicit "latest" tag.
func (a *api) imageKnown(c *fiber.Ctx, ref string) (bool, error) {
	known, err := a.Tenancy.HasImage(c.UserContext(), ref)
	if err == nil && !known && images.Validate(ref) == nil && images.Normalize(ref) != ref {
		known, err = a.Tenancy.HasImage(c.UserContext(), images.Normalize(ref))
	}
	return known, err
}

// chooseResourceGroup checks the named resource group, or picks the first
// allowed one.
func (a *api) chooseResourceGroup(c *fiber.Ctx, who caller, spec *domain.SessionSpec) error {
	const op = opCreateSession
	ctx := c.UserContext()
	typ := spec.Type
	switch typ {
	case "":
		typ = domain.SessionInteractive
	case domain.SessionInteractive, domain.SessionBatch:
	default:
		return domain.Invalid(op, "type", "unknown session type %q (interactive, batch)", typ)
	}
	allowed, err := a.Tenancy.AllowedResourceGroups(ctx, who.Domain, spec.Project, who.AccessKey)
	if err != nil {
		return err
	}
	takes := func(name string) (bool, error) {
		g, err := a.Tenancy.GetResourceGroup(ctx, name)
		if err != nil {
			return false, err
		}
		return slices.Contains(g.AllowedSessionTypes, typ), nil
	}
	if spec.ResourceGroup == "" {
		for _, name := range allowed {
			ok, err := takes(name)
			if err != nil {
				return err
			}
			if ok {
				spec.ResourceGroup = name
				return nil
			}
		}
		return &domain.Error{Op: op, Kind: domain.KindForbidden, Field: "resource_group",
			Message: "no active resource group taking " + string(typ) + " sessions is allowed for this domain, project or keypair"}
	}
	if err := domain.CheckName(op, "resource_group", spec.ResourceGroup); err != nil {
		return err
	}
	if !slices.Contains(allowed, spec.ResourceGroup) {
		if _, err := a.Tenancy.GetResourceGroup(ctx, spec.ResourceGroup); errors.Is(err, domain.ErrNotFound) {
			return domain.Invalid(op, "resource_group", "no resource group %q", spec.ResourceGroup)
		} else if err != nil {
			return err
		}
		return &domain.Error{Op: op, Kind: domain.KindForbidden, Field: "resource_group",
			Message: "resource group " + spec.ResourceGroup + " is inactive or not allowed for this domain, project or keypair"}
	}
	ok, err := takes(spec.ResourceGroup)
	switch {
	case err != nil:
		return err
	case !ok:
		return domain.Invalid(op, "resource_group", "resource group %q does not take %s sessions", spec.ResourceGroup, typ)
	}
	return nil
}
