// Package sessionlimits is the process manager that ends sessions at the
// limits of their keypair's resource policy: idle_timeout (reason idle-timeout) and max_session_lifetime
// (reason session-lifetime), each in seconds, 0 meaning never. It ends a
// session with commands.TerminateSession, like a user's DELETE: the
// session goes TERMINATING and its agents tear the kernels down.
//
// # What the limits count
//
// Lifetime counts from SCHEDULED (session.scheduled): the limit bounds how
// long a session holds cluster resources, and resources are held from
// SCHEDULED on, image pulls and container creation included (the
// scheduler's start timeout bounds those phases separately). It applies
// to every session type: a policy's lifetime caps batch sessions too.
//
// Idleness counts from RUNNING (the session's status-changed to RUNNING)
// or from the last activity, whichever is later, and applies to
// interactive sessions only (a batch session runs its command without
// anyone attending; its own limit is batch_timeout). Activity is API
// access to the session: any request about it (GET /v1/sessions/{id},
// its logs, ...) that succeeded, as the access log records it
// (access.logged with entity session and the session's id, in the
// session's stream for writes and in the access-log stream for reads).
// The app proxy's app traffic and the agents' kernel.activity (a busy
// notebook, terminal output, GPUs at work) are recorded the same way, so
// they count with no rule of their own. It
// is not the kernels' reports or the agents' heartbeats: those say that a
// container runs, which an abandoned notebook's container does too — the
// very thing the limit exists to end. Using the access log keeps the
// manager a fold of the log like every other (a restarted manager knows
// every access), at the price of the access log's own crash window for
// reads (a batch of records lost in a crash makes a session look idle
// since a little earlier). Idle deadlines also count from the manager's
// start at the earliest, so that a manager coming back after a while does
// not end sessions whose users could not reach a stopped API. For the same
// reason a DISCONNECTED session (its agent is silent) is not ended for
// idleness, and idleness counts from its return at the earliest; its
// lifetime still counts, since it still holds its resources.
//
// Policies are the keypair's current ones: changing a policy's limits
// applies to the sessions already running. A session whose keypair or
// policy is unknown has no limit. An interactive session whose policy
// sets no idle_timeout (0) takes the run-time setting
// session.default_idle_timeout (0: none), folded from the log like the
// policies (setting.changed), so a change applies to running sessions at
// the next check, on whichever replica runs the manager.
//
// The rules (IdleTimeout, IdleSince, LifetimeEnds) are in domain, shared
// with the read side, which shows a session's remaining time.
//
// One manager runs per cluster at a time (beside the scheduler); two
// would only terminate a session twice, which is an idempotent no-op.
package sessionlimits
