package commandapi

import "github.com/gofiber/fiber/v2"

// mountTenancy registers the authentication and administration commands
// (see the package documentation, "Tenancy"). Login is mounted before
// authentication, by MountPublic.
func (a *api) mountTenancy(v1 fiber.Router) {
	v1.Post("/auth/tokens", a.createToken)
	v1.Delete("/auth/tokens/:id", a.deleteToken)

	v1.Post("/domains", a.createDomain)
	v1.Patch("/domains/:id", a.modifyDomain)

	v1.Post("/projects", a.createProject)
	v1.Patch("/projects/:id", a.modifyProject)
	v1.Put("/projects/:id/members/:user_id", a.addProjectMember)
	v1.Delete("/projects/:id/members/:user_id", a.removeProjectMember)

	v1.Post("/users", a.createUser)
	v1.Patch("/users/:id", a.modifyUser)
	v1.Put("/users/:id/main-keypair", a.setMainKeypair)

	v1.Post("/keypairs", a.issueKeypair)
	v1.Patch("/keypairs/:id", a.modifyKeypair)
	v1.Post("/keypairs/:id/rotate-secret", a.rotateKeypairSecret)

	v1.Post("/keypair-policies", a.createKeypairPolicy)
	v1.Patch("/keypair-policies/:id", a.modifyKeypairPolicy)
	for _, scope := range []storagePolicyScope{userPolicies, projectPolicies} {
		v1.Post("/"+scope.path, a.createStoragePolicy(scope))
		v1.Patch("/"+scope.path+"/:id", a.modifyStoragePolicy(scope))
	}

	v1.Post("/resource-groups", a.createResourceGroup)
	v1.Patch("/resource-groups/:id", a.modifyResourceGroup)
	v1.Post("/resource-groups/:id/access", a.grantResourceGroupAccess)
	v1.Delete("/resource-groups/:id/access", a.revokeResourceGroupAccess)

	v1.Post("/images", a.registerImage)
	v1.Patch("/images/:id", a.modifyImage)
	v1.Delete("/images/:id", a.forgetImage)
}
