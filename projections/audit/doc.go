// Package audit is the audit trail's read model: an index of the sealed
// access records (audit.sealed events of the audit stream) that lets an
// auditor filter them by actor, action, entity, outcome and time, page
// through them by seq, and export them. The records themselves are read
// from the audit stream and returned exactly as stored, so an export
// verifies offline (domain/audit.Verify) without trusting this read
// model: it is a convenience index, the audit stream is the evidence.
//
// It also attributes records to domains (domains.go), for domain
// auditors: a record concerns its actor's domain and its entity's, worked
// out when the run is projected from the creations of users, keypairs,
// sessions, folders and tokens earlier in the log, and stored beside the
// records, never in them (their hashes cover them). A domain's records
// are listed alone (Filter.Domain), or with every other record elided
// (Filter.Elide) so that they still verify as a chain.
package audit
