package readapi

import (
	"context"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/infra/httpapi"
)

// mountTenancy registers the authentication and administration routes
// (see the package documentation, "Tenancy"). Login is mounted before
// authentication, by Mount.
func (a *api) mountTenancy(v1 fiber.Router) {
	v1.Get("/auth/whoami", a.whoami)
	v1.Post("/auth/tokens", a.createToken)
	v1.Get("/auth/tokens", a.listTokens)
	v1.Delete("/auth/tokens/:id", a.deleteToken)

	v1.Post("/domains", a.createDomain)
	v1.Get("/domains", a.listDomains)
	v1.Get("/domains/:id", a.getDomain)
	v1.Patch("/domains/:id", a.modifyDomain)

	v1.Post("/projects", a.createProject)
	v1.Get("/projects", a.listProjects)
	v1.Get("/projects/:id", a.getProject)
	v1.Patch("/projects/:id", a.modifyProject)
	v1.Get("/projects/:id/members", a.listProjectMembers)
	v1.Put("/projects/:id/members/:user_id", a.addProjectMember)
	v1.Delete("/projects/:id/members/:user_id", a.removeProjectMember)

	v1.Post("/users", a.createUser)
	v1.Get("/users", a.listUsers)
	v1.Get("/users/:id", a.getUser)
	v1.Patch("/users/:id", a.modifyUser)
	v1.Put("/users/:id/main-keypair", a.setMainKeypair)

	v1.Post("/keypairs", a.issueKeypair)
	v1.Get("/keypairs", a.listKeypairs)
	v1.Get("/keypairs/:id", a.getKeypair)
	v1.Patch("/keypairs/:id", a.modifyKeypair)
	v1.Post("/keypairs/:id/rotate-secret", a.rotateKeypairSecret)

	v1.Post("/keypair-policies", a.createKeypairPolicy)
	v1.Get("/keypair-policies", a.listKeypairPolicies)
	v1.Get("/keypair-policies/:id", a.getKeypairPolicy)
	v1.Patch("/keypair-policies/:id", a.modifyKeypairPolicy)
	for _, scope := range []storagePolicyScope{userPolicies, projectPolicies} {
		v1.Post("/"+scope.path, a.createStoragePolicy(scope))
		v1.Get("/"+scope.path, a.listStoragePolicies(scope))
		v1.Get("/"+scope.path+"/:id", a.getStoragePolicy(scope))
		v1.Patch("/"+scope.path+"/:id", a.modifyStoragePolicy(scope))
	}

	v1.Post("/resource-groups", a.createResourceGroup)
	v1.Get("/resource-groups", a.listResourceGroups)
	v1.Get("/resource-groups/:id", a.getResourceGroup)
	v1.Patch("/resource-groups/:id", a.modifyResourceGroup)
	v1.Post("/resource-groups/:id/access", a.grantResourceGroupAccess)
	v1.Delete("/resource-groups/:id/access", a.revokeResourceGroupAccess)

	v1.Post("/images", a.registerImage)
	v1.Get("/images", a.listImages)
	v1.Get("/images/:id", a.getImage)
	v1.Patch("/images/:id", a.modifyImage)
	v1.Delete("/images/:id", a.forgetImage)
}

// written is the answer of a command that changed an object: the position
// of its events (wait_for_position on a later GET reads it back).
type written struct {
	Position uint64 `json:"position"`
}

// items is the answer of a list.
type items[T any] struct {
	Items []T `json:"items"`
}

// reading authenticates a query and honours its wait_for_position.
func (a *api) reading(c *fiber.Ctx, op string) (caller, error) {
	who, err := callerOf(c)
	if err != nil {
		return caller{}, err
	}
	return who, a.waitForPosition(c, op)
}

// writing authenticates a command and honours its wait_for_position, so a
// client can make sure the objects it names are visible to the checks
// made on the read model first.
func (a *api) writing(c *fiber.Ctx, op string) (caller, error) { return a.reading(c, op) }

// decode decodes the body strictly (httpapi.DecodeJSON), naming the
// offending field.
func decode(c *fiber.Ctx, v any) error { return httpapi.DecodeJSON(c.Body(), v) }

// settle waits, at most MaxWait, until the read models reflect position,
// for answers whose effect the very next request depends on (a token
// issued or revoked). Past the wait the answer goes out anyway: the
// command succeeded, and the position lets the client wait itself.
func (a *api) settle(c *fiber.Ctx, position uint64) {
	ctx, cancel := context.WithTimeout(c.UserContext(), a.MaxWait)
	defer cancel()
	_ = a.Waiter.WaitFor(ctx, position)
}
