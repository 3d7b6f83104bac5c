// Package tenancy is the read model of who may do what with how much:
// domains, projects and their members, users, keypairs, the three kinds of
// resource policies, resource groups with their access lists, and the
// image registry, kept up to date by a projections.Projector from the
// tenancy events (domain.*, project.*, user.*, keypair.*, *-policy.*,
// resource-group.*, image.*).
//
// Secrets are kept apart from listings: GetUser and ListUsers never return
// a password hash, and GetKeypair and ListKeypairs never return a secret
// key. Login reads the hash of one user by e-mail address for the password
// check, and Credentials reads the secret key of one keypair by access key
// (with its owner's status and role) for the request signature verifier.
//
// A user's projects are read from project_members, the projection of the
// project streams' membership events: the project stream owns membership.
// A forgotten image has no row. E-mail reservations are a write-side
// device and are not projected.
package tenancy
