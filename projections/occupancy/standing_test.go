package occupancy_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/quota"
	"github.com/cairnhq/cairn/infra/projectiontest"
	"github.com/cairnhq/cairn/projections"
	"github.com/cairnhq/cairn/projections/occupancy"
	"github.com/cairnhq/cairn/projections/tenancy"
	"github.com/google/uuid"
)

type plainHasher struct{}

func (plainHasher) Hash(p string) (string, error) { return "plain$" + p, nil }

var superadmin = commands.Principal{Role: domain.RoleSuperadmin, Domain: "default"}

// admission is the handlers with admission checks over both read models,
// both projected.
type admission struct {
	h                *commands.Handlers
	tenancy, occ     *projectiontest.Running
	user             uuid.UUID
	mainKey, otherKy string
	last             uint64
}

// tenantSpec shapes the tenant: the domain acme and the project acme/ml
// with their totals, a user whose main keypair has the policy "main" and
// whose other keypair has "other".
type tenantSpec struct {
	domainTotal, projectTotal domain.Slots
	main, other               domain.KeypairPolicySpec
}

func newAdmission(t *testing.T, b *projectiontest.Backend, spec tenantSpec) *admission {
	t.Helper()
	tn, occ := tenancy.New(b.DB), occupancy.New(b.DB)
	for _, p := range []projections.Projection{tn, occ} {
		if err := projections.Setup(ctx, b.DB, p); err != nil {
			t.Fatal(err)
		}
	}
	h, err := commands.NewHandlers(b.Store, projectiontest.StepClock(), commands.Options{
		PasswordHasher: plainHasher{}, Quotas: occupancy.Standings{Tenancy: tn, Occupancy: occ},
	})
	if err != nil {
		t.Fatal(err)
	}
	a := &admission{
		h:       h,
		tenancy: projectiontest.Start(t, b.DB, b, tn, projections.Options{}),
		occ:     projectiontest.Start(t, b.DB, b, occ, projections.Options{}),
	}
	md := projectiontest.MD
	step := func(r commands.Result, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		a.last = max(a.last, r.Position)
	}
	step(h.CreateKeypairPolicy.Handle(ctx, md, commands.CreateKeypairPolicy{Actor: superadmin, Name: "main", Spec: spec.main}))
	step(h.CreateKeypairPolicy.Handle(ctx, md, commands.CreateKeypairPolicy{Actor: superadmin, Name: "other", Spec: spec.other}))
	step(h.CreateDomain.Handle(ctx, md, commands.CreateDomain{Actor: superadmin, Spec: domain.DomainSpec{Name: "acme", TotalResourceSlots: spec.domainTotal}}))
	step(h.CreateProject.Handle(ctx, md, commands.CreateProject{Actor: superadmin, Spec: domain.ProjectSpec{Domain: "acme", Name: "ml", TotalResourceSlots: spec.projectTotal}}))
	u, err := h.CreateUser.Handle(ctx, md, commands.CreateUser{Actor: superadmin, Spec: domain.UserSpec{Email: "ada@acme.test", Domain: "acme"}, Password: "correct-horse"})
	step(commands.Result{Position: u.Position}, err)
	a.user = u.UserID
	k, err := h.IssueKeypair.Handle(ctx, md, commands.IssueKeypair{Actor: superadmin, UserID: u.UserID, ResourcePolicy: "main", Main: true})
	step(commands.Result{Position: k.Position}, err)
	a.mainKey = k.AccessKey
	k, err = h.IssueKeypair.Handle(ctx, md, commands.IssueKeypair{Actor: superadmin, UserID: u.UserID, ResourcePolicy: "other"})
	step(commands.Result{Position: k.Position}, err)
	a.otherKy = k.AccessKey
	a.sync(t)
	return a
}

// sync waits until both read models show every write so far.
func (a *admission) sync(t *testing.T) {
	t.Helper()
	a.tenancy.WaitFor(t, a.last)
	a.occ.WaitFor(t, a.last)
}

// request asks for a session of size kernels of slots each through
// accessKey, after the read models caught up with every earlier write.
func (a *admission) request(t *testing.T, accessKey string, size int, slots domain.Slots) (commands.RequestSessionResult, error) {
	t.Helper()
	a.sync(t)
	res, err := a.h.RequestSession.Handle(ctx, projectiontest.MD, commands.RequestSession{Spec: domain.SessionSpec{
		Name: "nb", Owner: domain.Owner{UserID: a.user.String(), AccessKey: accessKey},
		Domain: "acme", Project: "ml", ResourceGroup: "default",
		Type: domain.SessionInteractive, Image: "cr.io/jupyter:1", ClusterSize: size, Resources: slots,
	}})
	if err == nil {
		a.last = max(a.last, res.Position)
	}
	return res, err
}

func cpuMem(cpu, memGiB int64) domain.Slots {
	return domain.Slots{domain.SlotCPU: domain.Units(cpu), domain.SlotMem: projectiontest.GiB(memGiB)}
}

// TestAdmissionAtEnqueue is one test per limit RequestSession checks with
// what the read models know: each refusal has the kind the HTTP layer
// maps to 400 or 403 and names its limit; the request just within the
// limit passes.
func TestAdmissionAtEnqueue(t *testing.T) {
	unlimited := domain.KeypairPolicySpec{DefaultForUnspecified: domain.UnspecifiedUnlimited, MaxContainersPerSession: 8}
	with := func(f func(*domain.KeypairPolicySpec)) domain.KeypairPolicySpec {
		p := unlimited
		f(&p)
		return p
	}
	for _, tc := range []struct {
		name   string
		tenant tenantSpec
		// within is a request that passes; over one refused.
		key          func(*admission) string
		within, over func(*admission, *testing.T) error
		kind         domain.Kind
		want         func(*admission) string
	}{
		{
			name:   "max_containers_per_session",
			tenant: tenantSpec{main: with(func(p *domain.KeypairPolicySpec) { p.MaxContainersPerSession = 2 }), other: unlimited},
			within: func(a *admission, t *testing.T) error { _, err := a.request(t, a.mainKey, 2, cpuMem(1, 1)); return err },
			over:   func(a *admission, t *testing.T) error { _, err := a.request(t, a.mainKey, 3, cpuMem(1, 1)); return err },
			kind:   domain.KindInvalid,
			want: func(a *admission) string {
				return "cluster_size: 3 kernels exceed max_containers_per_session 2 of keypair " + a.mainKey + "'s resource policy"
			},
		},
		{
			name:   "max_pending_session_count",
			tenant: tenantSpec{main: with(func(p *domain.KeypairPolicySpec) { p.MaxPendingSessionCount = 2 }), other: unlimited},
			within: func(a *admission, t *testing.T) error {
				for range 2 {
					if _, err := a.request(t, a.mainKey, 1, cpuMem(1, 1)); err != nil {
						return err
					}
				}
				return nil
			},
			over: func(a *admission, t *testing.T) error { _, err := a.request(t, a.mainKey, 1, cpuMem(1, 1)); return err },
			kind: domain.KindQuotaExceeded,
			want: func(a *admission) string { return "keypair " + a.mainKey + ": max_pending_session_count 2 reached" },
		},
		{
			name: "max_pending_session_resource_slots",
			tenant: tenantSpec{main: with(func(p *domain.KeypairPolicySpec) {
				p.MaxPendingSessionResourceSlots = domain.Slots{domain.SlotCPU: domain.Units(3)}
			}), other: unlimited},
			within: func(a *admission, t *testing.T) error { _, err := a.request(t, a.mainKey, 1, cpuMem(2, 1)); return err },
			over:   func(a *admission, t *testing.T) error { _, err := a.request(t, a.mainKey, 1, cpuMem(2, 1)); return err },
			kind:   domain.KindQuotaExceeded,
			want: func(a *admission) string {
				return "keypair " + a.mainKey + ": max_pending_session_resource_slots cpu limit 3 exceeded (requested 2)"
			},
		},
		{
			name: "keypair total_resource_slots",
			tenant: tenantSpec{main: unlimited, other: with(func(p *domain.KeypairPolicySpec) {
				p.TotalResourceSlots = domain.Slots{domain.SlotCPU: domain.Units(4)}
			})},
			within: func(a *admission, t *testing.T) error { _, err := a.request(t, a.otherKy, 2, cpuMem(2, 1)); return err },
			over:   func(a *admission, t *testing.T) error { _, err := a.request(t, a.otherKy, 1, cpuMem(5, 1)); return err },
			kind:   domain.KindQuotaExceeded,
			want: func(a *admission) string {
				return "keypair " + a.otherKy + ": total_resource_slots cpu limit 4 exceeded (requested 5)"
			},
		},
		{
			name: "default_for_unspecified limited: a slot the policy does not name",
			tenant: tenantSpec{main: with(func(p *domain.KeypairPolicySpec) {
				p.TotalResourceSlots, p.DefaultForUnspecified = cpuMem(8, 8), domain.UnspecifiedLimited
			}), other: unlimited},
			within: func(a *admission, t *testing.T) error { _, err := a.request(t, a.mainKey, 1, cpuMem(8, 8)); return err },
			over: func(a *admission, t *testing.T) error {
				_, err := a.request(t, a.mainKey, 1, domain.Slots{domain.SlotCPU: domain.Units(1), domain.SlotMem: projectiontest.GiB(1), domain.SlotCUDADevice: domain.Units(1)})
				return err
			},
			kind: domain.KindQuotaExceeded,
			want: func(a *admission) string {
				return "keypair " + a.mainKey + ": total_resource_slots cuda.device limit 0 exceeded (requested 1)"
			},
		},
		{
			name: "user total_resource_slots (its main keypair's policy)",
			tenant: tenantSpec{main: with(func(p *domain.KeypairPolicySpec) {
				p.TotalResourceSlots = domain.Slots{domain.SlotCPU: domain.Units(4)}
			}), other: unlimited},
			within: func(a *admission, t *testing.T) error {
				_, err := a.request(t, a.otherKy, 1, cpuMem(4, 100))
				return err
			},
			over: func(a *admission, t *testing.T) error { _, err := a.request(t, a.otherKy, 1, cpuMem(5, 1)); return err },
			kind: domain.KindQuotaExceeded,
			want: func(a *admission) string {
				return "user " + a.user.String() + ": total_resource_slots cpu limit 4 exceeded (requested 5)"
			},
		},
		{
			name:   "project total_resource_slots",
			tenant: tenantSpec{main: unlimited, other: unlimited, projectTotal: domain.Slots{domain.SlotMem: projectiontest.GiB(8)}},
			within: func(a *admission, t *testing.T) error {
				_, err := a.request(t, a.mainKey, 2, cpuMem(64, 4))
				return err
			},
			over: func(a *admission, t *testing.T) error { _, err := a.request(t, a.otherKy, 3, cpuMem(1, 3)); return err },
			kind: domain.KindQuotaExceeded,
			want: func(*admission) string {
				return "project acme/ml: total_resource_slots mem limit 8G exceeded (requested 9G)"
			},
		},
		{
			name:   "domain total_resource_slots",
			tenant: tenantSpec{main: unlimited, other: unlimited, domainTotal: domain.Slots{domain.SlotCPU: domain.Units(2)}},
			within: func(a *admission, t *testing.T) error {
				_, err := a.request(t, a.mainKey, 1, cpuMem(2, 100))
				return err
			},
			over: func(a *admission, t *testing.T) error { _, err := a.request(t, a.mainKey, 1, cpuMem(3, 1)); return err },
			kind: domain.KindQuotaExceeded,
			want: func(*admission) string {
				return "domain acme: total_resource_slots cpu limit 2 exceeded (requested 3)"
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
				a := newAdmission(t, b, tc.tenant)
				if err := tc.within(a, t); err != nil {
					t.Fatalf("within the limit: %v", err)
				}
				err := tc.over(a, t)
				if err == nil {
					t.Fatal("over the limit: admitted")
				}
				if k := domain.KindOf(err); k != tc.kind || !strings.Contains(err.Error(), tc.want(a)) {
					t.Fatalf("refused with %s %q, want %s naming %q", k, err, tc.kind, tc.want(a))
				}
				var ex *quota.Exceeded
				if tc.kind == domain.KindQuotaExceeded && (!errors.As(err, &ex) || !strings.Contains(tc.want(a), ex.Limit)) {
					t.Fatalf("cause %+v", ex)
				}
			})
		})
	}
}

// TestPendingLimitFreesUp: a session leaving the queue (scheduled or
// cancelled) makes room for another under max_pending_session_count.
func TestPendingLimitFreesUp(t *testing.T) {
	projectiontest.Run(t, func(t *testing.T, b *projectiontest.Backend) {
		a := newAdmission(t, b, tenantSpec{
			main:  domain.KeypairPolicySpec{DefaultForUnspecified: domain.UnspecifiedUnlimited, MaxPendingSessionCount: 1},
			other: domain.KeypairPolicySpec{DefaultForUnspecified: domain.UnspecifiedUnlimited},
		})
		first, err := a.request(t, a.mainKey, 1, cpuMem(1, 1))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.request(t, a.mainKey, 1, cpuMem(1, 1)); domain.KindOf(err) != domain.KindQuotaExceeded {
			t.Fatalf("second pending session: %v", err)
		}
		if _, err := a.request(t, a.otherKy, 1, cpuMem(1, 1)); err != nil {
			t.Fatalf("another keypair's queue is its own: %v", err)
		}
		out, err := a.h.CancelPendingSession.Handle(ctx, projectiontest.MD, commands.CancelPendingSession{SessionID: first.SessionID})
		if err != nil {
			t.Fatal(err)
		}
		a.last = max(a.last, out.Position)
		if _, err := a.request(t, a.mainKey, 1, cpuMem(1, 1)); err != nil {
			t.Fatalf("after the first left the queue: %v", err)
		}
	})
}
