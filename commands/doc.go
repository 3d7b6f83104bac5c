// Package commands is Cairn's write side: one command type per file, each
// with the handler that carries it out, and the Handlers list that holds
// them all.
//
// Every handler follows the same shape (see repository.go): load the
// aggregate from its stream (named by a domain.Stream), let the domain
// decide (a pure method returning events or a domain error), append the
// events with the revision the aggregate was loaded at, and when another
// writer got there first (eventstore.ErrWrongExpectedRevision) start over
// from a fresh load, a bounded number of times with a jittered exponential
// backoff (cenkalti/backoff). Event ids are made once per attempt; time
// comes from the clock the handlers were built with; who and why (actor,
// request id, causation id, client IP) comes from the caller as Metadata
// and is stored with every event.
//
// A request's access record (audit trail) travels in Metadata.Access: the
// Audited decorator, around every handler NewHandlers builds, hands it to
// the command's appends, and the first append stores it with its events,
// naming the entity of its stream (see Access).
//
// Every handler returns the global position of its last append, so a
// client can ask the read side for a state at least that recent. When a
// command appends nothing (an idempotent repeat), the position is that of
// the newest event of the streams it read: the state it observed.
//
// Errors are domain errors (*domain.Error): the decision's own, or the
// store's translated by kind (a revision conflict that outlived the retries
// is KindConflict, a missing stream KindNotFound, a refused event
// KindInvalid, a closed or failing store KindUnavailable).
//
// Commands that span streams (ScheduleSession, ReportKernelStatus,
// MarkAgentLost, CreateUser, IssueKeypair) write them one after the other,
// never in one transaction; each documents what a crash between two
// appends leaves behind and what repairs it.
//
// The tenancy commands (domains, projects, users, keypairs, resource
// policies, resource groups, images) carry the Principal that acts and
// authorize it before writing; tenancy.go holds the decision table.
// Their aggregates live in streams named by natural key (domain-<name>,
// keypair-<access key>, ...: domain.DomainStream and its siblings), so
// creating one with the expected revision
// "no stream" is what keeps the key unique; user e-mail addresses, whose
// users are named by id, are kept unique by a reservation stream (see
// CreateUser).
package commands
