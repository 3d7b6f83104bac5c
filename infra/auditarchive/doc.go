// Package auditarchive moves the oldest part of the audit trail out of the
// live event store into files, and reads such archives back for
// verification, so that the trail can be kept for years without the live
// store growing forever and still be verified as one chain.
//
// An archive is a directory holding the records as stored (NDJSON, one
// record a line, byte for byte as in the store, in files named
// audit-<first seq>-<last seq>.ndjson with 12-digit zero-padded seqs, so
// their names sort in chain order) and heads.ndjson, the head of its last
// record signed with the audit head key (domain/audit.SignedHead).
//
// Archive writes the files (each fsynced, created exclusively, mode 0640),
// verifies what it wrote against the live store (every hash and link, and
// the signed head), and only then prunes the archived runs from the store
// (eventstore.Pruner): each pruned audit.sealed event becomes a tombstone,
// domain.AuditPruned, naming the head of the last archived record, where
// the live chain now starts. Only whole runs (events) are archived, and
// the audit stream's last event never is, so the sequencer keeps chaining
// from the live head.
package auditarchive
