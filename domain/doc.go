// Package domain is Cairn's pure model: resource slots and their amounts,
// the session, agent, virtual folder and tenancy aggregates (domains,
// projects, users, keypairs, resource policies, resource groups, images)
// and the run-time settings, with their events and invariants, and the
// error kinds every layer speaks.
// It does no I/O and imports nothing of Cairn's but its own sub-package
// domain/audit (the audit trail's records and hash chain): time and ids
// come in as arguments or inside events. Event payloads are JSON, written
// and read by go-json-experiment/json with encoding/json's semantics.
package domain
