package occupancy_test

import (
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/commands/quotas"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/quota"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections/occupancy"
	"github.com/cairnhq/cairn/projections/tenancy"
)

// TestQuotasMirrorTheBook: the quota view built from the read models is
// exactly the one the scheduler builds from the log (commands/quotas),
// for sessions of a keypair with a policy, of another keypair of the same
// user (the user's limit is its main keypair's policy), of a project and
// a domain with totals, and of a keypair nobody knows (no limit).
func TestQuotasMirrorTheBook(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		a := newAdmission(t, b, tenantSpec{
			domainTotal: domain.Slots{domain.SlotCPU: domain.Units(100)}, projectTotal: domain.Slots{domain.SlotCPU: domain.Units(10)},
			main:  domain.KeypairPolicySpec{TotalResourceSlots: cpuMem(8, 64), MaxConcurrentSessions: 3, MaxContainersPerSession: 4},
			other: domain.KeypairPolicySpec{DefaultForUnspecified: domain.UnspecifiedUnlimited, MaxContainersPerSession: 4},
		})
		out, err := a.h.RegisterAgent.Handle(ctx, projectiontest.MD, commands.RegisterAgent{Spec: projectiontest.AgentSpec("node-1", 64)})
		if err != nil {
			t.Fatal(err)
		}
		a.last = max(a.last, out.Position)
		var sessions []quota.Session
		for i, key := range []string{a.mainKey, a.otherKy, a.mainKey} {
			res, err := a.request(t, key, 1+i%2, cpuMem(2, 1))
			if err != nil {
				t.Fatal(err)
			}
			size := 1 + i%2
			sessions = append(sessions, quota.Session{ID: res.SessionID, Owner: domain.Owner{UserID: a.user.String(), AccessKey: key},
				Domain: "acme", Project: "ml", Kernels: size, Requested: cpuMem(2*int64(size), int64(size))})
			if i == 0 {
				s, err := a.h.ScheduleSession.Handle(ctx, projectiontest.MD, commands.ScheduleSession{SessionID: res.SessionID,
					Kernels: projectiontest.Place("node-1", res.KernelIDs, "", "")})
				if err != nil {
					t.Fatal(err)
				}
				a.last = max(a.last, s.Position)
			}
		}
		sessions = append(sessions, quota.Session{ID: uuid.New(), Owner: domain.Owner{UserID: uuid.NewString(), AccessKey: "AK-ghost"},
			Domain: "nowhere", Project: "none", Kernels: 1, Requested: cpuMem(1, 1)})
		a.sync(t)

		book := quotas.NewBook()
		for _, ev := range projectiontest.Events(t, b.Store, a.last) {
			if err := book.ApplyRecorded(ev); err != nil {
				t.Fatal(err)
			}
		}
		want := book.View(sessions)
		got, err := occupancy.Standings{Tenancy: tenancy.New(b.DB), Occupancy: occupancy.New(b.DB)}.Quotas(ctx, sessions)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("from the read models:\n%+v\nfrom the log:\n%+v", got, want)
		}
		if ku := want.Keypairs[a.mainKey]; ku.MaxConcurrentSessions != 3 || ku.ConcurrentSessions != 1 || ku.Limits[domain.SlotCPU] != domain.Units(8) ||
			want.Projects["acme/ml"].Limits[domain.SlotCPU] != domain.Units(10) || len(want.Users) != 1 {
			t.Fatalf("the view should hold the limits and the use: %+v", want)
		}
	})
}
