// Package domain is Cairn's pure model: resource slots and their amounts,
// the session and agent aggregates with their events and invariants, the
// tenancy aggregates (domains, projects, users, keypairs, resource
// policies, resource groups, images), and the error kinds every layer
// speaks. It does no I/O and imports nothing of
// Cairn's but itself: time and ids come in as arguments or inside events.
package domain
