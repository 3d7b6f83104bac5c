package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/quota"
)

// QuotaSource tells RequestSession what is already known of a new
// session's limits: its keypair's policy, its user's main keypair's
// policy, its project's and domain's totals, and the keypair's pending
// sessions. The read models answer it (projections/occupancy.Standings).
type QuotaSource interface {
	Standing(ctx context.Context, owner domain.Owner, domainName, project string) (quota.Standing, error)
}

// admission answers RequestSession's admission checks (nil quotas admit
// every request).
type admission struct{ quotas QuotaSource }

// admit refuses a session whose answer is already known (quota.Admit):
// more kernels than max_containers_per_session (KindInvalid), the
// keypair's max_pending_session_count or
// max_pending_session_resource_slots reached, or a request that alone
// exceeds a keypair's, user's, project's or domain's total_resource_slots
// (KindQuotaExceeded). Without a QuotaSource it admits everything: the
// scheduler's checks are the authoritative ones either way.
//
// The check is optimistic: it reads read models, which lag the log, and
// does not serialise concurrent requests of one keypair, so requests that
// arrive together may all pass a pending-count check one of them should
// have failed. That is accepted: the pending limits bound a queue (no
// session holds anything while it waits), the overshoot is bounded by the
// keypair's requests in flight within the projectors' lag (milliseconds),
// and what must never be exceeded — the slots sessions occupy and their
// concurrency — is decided by the single scheduler over the log itself.
// Serialising enqueues through a per-keypair stream would make every
// request of a keypair contend on one stream for a limit that does not
// need it.
func (d admission) admit(ctx context.Context, events []domain.Event) error {
	if d.quotas == nil {
		return nil
	}
	for _, ev := range events {
		if e, ok := ev.(domain.SessionRequested); ok {
			st, err := d.quotas.Standing(ctx, e.Owner, e.Domain, e.Project)
			if err != nil {
				return err
			}
			return quota.Admit(quota.SessionOf(e), st)
		}
	}
	return nil
}
