// Package audit is the audit trail's read model: the sealed access records
// (audit.sealed events of the audit stream) as rows an auditor can
// filter by actor, action, entity, outcome and time, page through by seq,
// and export. Each row keeps the record's JSON exactly as it was stored,
// so an export verifies offline (domain/audit.Verify) without trusting
// this read model: it is a convenience index, the audit stream is the
// evidence.
package audit
