package readapi

import (
	"github.com/gofiber/fiber/v2"
)

// mountTenancy registers the authentication and administration queries
// (see the package documentation, "Tenancy").
func (a *api) mountTenancy(v1 fiber.Router) {
	v1.Get("/auth/whoami", a.whoami)
	v1.Get("/auth/tokens", a.listTokens)

	v1.Get("/domains", a.listDomains)
	v1.Get("/domains/:id", a.recheck(a.getDomain))

	v1.Get("/projects", a.listProjects)
	v1.Get("/projects/:id", a.recheck(a.getProject))
	v1.Get("/projects/:id/members", a.listProjectMembers)

	v1.Get("/users", a.listUsers)
	v1.Get("/users/:id", a.recheck(a.getUser))

	v1.Get("/keypairs", a.listKeypairs)
	v1.Get("/keypairs/:id", a.recheck(a.getKeypair))

	v1.Get("/keypair-policies", a.listKeypairPolicies)
	v1.Get("/keypair-policies/:id", a.recheck(a.getKeypairPolicy))
	for _, scope := range []storagePolicyScope{userPolicies, projectPolicies} {
		v1.Get("/"+scope.path, a.listStoragePolicies(scope))
		v1.Get("/"+scope.path+"/:id", a.recheck(a.getStoragePolicy(scope)))
	}

	v1.Get("/resource-groups", a.listResourceGroups)
	v1.Get("/resource-groups/:id", a.recheck(a.getResourceGroup))

	v1.Get("/images", a.listImages)
	v1.Get("/images/:id", a.recheck(a.getImage))
}

// items is the answer of a list.
type items[T any] struct {
	Items []T `json:"items"`
}

// Reading authenticates a request and honours its wait_for_position, so
// the read models reflect at least the position the client asked for.
func (a *API) Reading(c *fiber.Ctx, op string) (Caller, error) {
	who, err := CallerOf(c)
	if err != nil {
		return Caller{}, err
	}
	return who, a.WaitForPosition(c, op)
}
