// Package auditheads signs the audit chain's head with an ed25519 key kept
// outside the event store and publishes the signed heads to sinks out of
// the store's reach (an append-only file on another disk, syslog, an HTTP
// endpoint), so that an auditor can later prove the trail was neither
// truncated nor re-hashed (domain/audit: SignedHead, VerifyHeads).
//
// The Signer runs beside the audit sequencer (commands/auditseq), which
// reports every head it seals (Signer.Observe); it signs at least every
// Config.Every records, and every Config.Interval while the head has moved.
// Publishing never holds the sequencer up: each sink has its own bounded
// queue and worker, retries with backoff, and a sink that fails (a full
// disk, an endpoint down) is logged and counted in the metrics, never
// allowed to stop the sequencer or the API.
//
// The private key file holds one line, "ed25519-private <standard base64
// of the 32-byte seed>", and is refused unless its mode is 0600 or
// stricter and the running user owns it (LoadKey; WriteKey makes one).
package auditheads
