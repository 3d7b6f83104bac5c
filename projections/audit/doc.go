// Package audit is the audit trail's read model: an index of the sealed
// access records (audit.sealed events of the audit stream) that lets an
// auditor filter them by actor, action, entity, outcome and time, page
// through them by seq, and export them. The records themselves are read
// from the audit stream and returned exactly as stored, so an export
// verifies offline (domain/audit.Verify) without trusting this read
// model: it is a convenience index, the audit stream is the evidence.
package audit
