package domain

import (
	"errors"
	"reflect"
	"testing"

	"github.com/google/uuid"
)

// The "given events, when command, then events" harness of the tenancy
// aggregates: one generic runner over each aggregate's rehydrate function.

type aggCase[A any] struct {
	name  string
	given []Event
	when  func(A) ([]Event, error)
	then  []Event
	err   error
	// fields, for an invalid input, lists fields every one of which must be
	// named by the error.
	fields []string
	check  func(t *testing.T, a A)
}

func runCases[A interface{ Revision() int64 }](t *testing.T, rehydrate func([]RecordedEvent) (A, error), cases []aggCase[A]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := mustFold(t, rehydrate, c.given)
			got, err := c.when(a)
			checkErr(t, err, c.err)
			checkFields(t, err, c.fields)
			checkEvents(t, got, c.then)
			if !reflect.DeepEqual(a, mustFold(t, rehydrate, c.given)) {
				t.Fatal("the decision changed the aggregate it was called on")
			}
			after := mustFold(t, rehydrate, append(append([]Event(nil), c.given...), got...))
			if want := int64(len(c.given) + len(got) - 1); after.Revision() != want {
				t.Fatalf("revision %d, want %d", after.Revision(), want)
			}
			if c.check != nil {
				c.check(t, after)
			}
		})
	}
}

func mustFold[A any](t *testing.T, rehydrate func([]RecordedEvent) (A, error), events []Event) A {
	t.Helper()
	a, err := rehydrate(recorded(events))
	if err != nil {
		t.Fatalf("rehydrate: %v", err)
	}
	return a
}

// checkFields verifies that err names every field (as *Error.Field, in a
// single error or among joined ones).
func checkFields(t *testing.T, err error, fields []string) {
	t.Helper()
	named := map[string]bool{}
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var de *Error
		if errors.As(e, &de) {
			named[de.Field] = true
		}
	}
	if err != nil {
		walk(err)
	}
	for _, f := range fields {
		if !named[f] {
			t.Errorf("error %v does not name field %q (names %v)", err, f, named)
		}
	}
}

// Fixtures.

var (
	userA = uuid.MustParse("0195a0c0-0000-7000-8000-0000000000a0")
	userB = uuid.MustParse("0195a0c0-0000-7000-8000-0000000000b0")
)

const (
	accessKeyA = "AKIAAAAAAAAAAAAAAAAA"
	secretA    = "abcdefghijklmnopqrstuvwxyz0123456789-_AB"
	secretB    = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
)

func ptr[T any](v T) *T { return &v }

func gpuHosts() VFolderHosts {
	return VFolderHosts{"local:vol1": {PermMountInSession, PermCreateVFolder}}
}

func domainCreated() DomainCreated {
	return DomainCreated{Name: "acme", Description: "ACME", TotalResourceSlots: Slots{SlotCPU: Units(64), SlotCUDADevice: Units(8)},
		AllowedVFolderHosts: VFolderHosts{"local:vol1": {PermCreateVFolder, PermMountInSession}}, At: at(0)}
}

func projectCreated() ProjectCreated {
	return ProjectCreated{Domain: "acme", Name: "ml", Description: "", TotalResourceSlots: Slots{SlotCPU: Units(16)},
		AllowedVFolderHosts: VFolderHosts{}, ResourcePolicy: "default", At: at(0)}
}

func userCreated() UserCreated {
	return UserCreated{UserID: userA, Email: "Alice@Example.com", Username: "alice", Domain: "acme", Role: RoleUser,
		Status: UserActive, PasswordHash: "$argon2id$v=19$x", ResourcePolicy: "default", At: at(0)}
}

func keypairIssued() KeypairIssued {
	return KeypairIssued{AccessKey: accessKeyA, SecretKey: secretA, UserID: userA, Domain: "acme", ResourcePolicy: "default", RateLimit: 1000, At: at(0)}
}

func keypairPolicyCreated() KeypairPolicyCreated {
	return KeypairPolicyCreated{Name: "default", KeypairPolicySpec: KeypairPolicySpec{
		TotalResourceSlots: Slots{SlotCPU: Units(8)}, DefaultForUnspecified: UnspecifiedUnlimited,
		MaxConcurrentSessions: 4, MaxContainersPerSession: 2, MaxPendingSessionCount: 10,
		MaxPendingSessionResourceSlots: Slots{}, IdleTimeout: 3600, AllowedVFolderHosts: VFolderHosts{},
	}, At: at(0)}
}

func resourceGroupCreated() ResourceGroupCreated {
	return ResourceGroupCreated{Name: "gpu", ResourceGroupSpec: ResourceGroupSpec{
		IsActive: true, IsPublic: true, AllowedSessionTypes: []SessionType{SessionInteractive, SessionBatch},
		SchedulerOrder: OrderFIFO, AgentSelector: SelectorDispersed,
	}, At: at(0)}
}

const imageRef = "cr.example.com/pytorch:2.4"

func imageRegistered() ImageRegistered {
	return ImageRegistered{Reference: imageRef, Architecture: "x86_64", ImageSpec: ImageSpec{
		Labels: map[string]string{"ai.backend.kernelspec": "1"}, MinResourceSlots: Slots{SlotCPU: Units(1)},
		MaxResourceSlots: Slots{}, ServicePorts: []ServicePort{{Name: "jupyter", Protocol: "http", Port: 8080}},
	}, At: at(0)}
}

// tenancyEvents is one populated event of every tenancy type, for the
// registry round trip.
func tenancyEvents() []Event {
	return []Event{
		domainCreated(),
		DomainModified{Description: "d", TotalResourceSlots: Slots{}, AllowedVFolderHosts: gpuHosts(), At: at(1)},
		DomainActivated{At: at(1)}, DomainDeactivated{At: at(1)},
		projectCreated(),
		ProjectModified{Description: "p", TotalResourceSlots: Slots{SlotMem: gib(1)}, AllowedVFolderHosts: VFolderHosts{}, ResourcePolicy: "x", At: at(1)},
		ProjectActivated{At: at(1)}, ProjectDeactivated{At: at(1)},
		ProjectMemberAdded{UserID: userA, At: at(1)}, ProjectMemberRemoved{UserID: userA, At: at(1)},
		userCreated(),
		UserModified{Username: "a", FullName: "A", Role: RoleAdmin, Status: UserInactive, ResourcePolicy: "p", At: at(1)},
		UserPasswordChanged{PasswordHash: "h", At: at(1)},
		UserMainKeypairSet{AccessKey: accessKeyA, At: at(1)},
		UserCreationAbandoned{UserID: userA, Email: "a@b.c", At: at(1)},
		UserEmailReserved{Email: "a@b.c", UserID: userA, RequestID: "r", At: at(1)},
		keypairIssued(),
		KeypairModified{ResourcePolicy: "p", RateLimit: 3, At: at(1)},
		KeypairActivated{At: at(1)}, KeypairDeactivated{At: at(1)},
		KeypairSecretRotated{SecretKey: secretB, At: at(1)},
		keypairPolicyCreated(),
		KeypairPolicyModified{KeypairPolicySpec: keypairPolicyCreated().KeypairPolicySpec, At: at(1)},
		UserPolicyCreated{Name: "u", StoragePolicySpec: StoragePolicySpec{MaxVFolderCount: 3, MaxQuotaScopeSize: 1 << 30}, At: at(1)},
		UserPolicyModified{StoragePolicySpec: StoragePolicySpec{MaxVFolderCount: 4}, At: at(1)},
		ProjectPolicyCreated{Name: "p", StoragePolicySpec: StoragePolicySpec{MaxVFolderCount: 3}, At: at(1)},
		ProjectPolicyModified{StoragePolicySpec: StoragePolicySpec{MaxQuotaScopeSize: 5}, At: at(1)},
		resourceGroupCreated(),
		ResourceGroupModified{ResourceGroupSpec: resourceGroupCreated().ResourceGroupSpec, At: at(1)},
		ResourceGroupAccessGranted{Grantee: Grantee{GranteeProject, "acme/ml"}, At: at(1)},
		ResourceGroupAccessRevoked{Grantee: Grantee{GranteeKeypair, accessKeyA}, At: at(1)},
		imageRegistered(),
		ImageModified{ImageSpec: imageRegistered().ImageSpec, At: at(1)},
		ImageForgotten{At: at(1)},
		tokenIssued(),
		TokenRevoked{At: at(1)},
	}
}

var tokenA = uuid.MustParse("0195a0c0-0000-7000-8000-00000000c0de")

const digestA = "6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b"

func tokenIssued() TokenIssued {
	return TokenIssued{TokenID: tokenA, UserID: userA, Domain: "acme", Kind: TokenBearer, Digest: digestA,
		Description: "ci", ExpiresAt: at(3600), At: at(0)}
}
