package commands

import (
	"errors"
	"fmt"
	"time"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// Handlers lists every command handler. Build it with NewHandlers.
type Handlers struct {
	RequestSession        Handler[RequestSession, RequestSessionResult]
	TerminateSession      Handler[TerminateSession, Result]
	CancelPendingSession  Handler[CancelPendingSession, Result]
	UpdatePendingSession  Handler[UpdatePendingSession, Result]
	UpdatePendingSessions Handler[UpdatePendingSessions, UpdatePendingSessionsResult]
	ScheduleSession       Handler[ScheduleSession, Result]
	ScheduleSessions      Handler[ScheduleSessions, ScheduleSessionsResult]
	RegisterAgent         Handler[RegisterAgent, Result]
	ReportKernelStatus    Handler[ReportKernelStatus, Result]
	MarkAgentLost         Handler[MarkAgentLost, Result]
	DisconnectAgent       Handler[DisconnectAgent, Result]
	ReconnectAgent        Handler[ReconnectAgent, Result]
	ReleaseAllocation     Handler[ReleaseAllocation, Result]
	ForceTerminateSession Handler[ForceTerminateSession, Result]

	// Tenancy (see tenancy.go for who may send what).
	CreateDomain              Handler[CreateDomain, Result]
	ModifyDomain              Handler[ModifyDomain, Result]
	CreateProject             Handler[CreateProject, Result]
	ModifyProject             Handler[ModifyProject, Result]
	AddProjectMember          Handler[AddProjectMember, Result]
	RemoveProjectMember       Handler[RemoveProjectMember, Result]
	CreateUser                Handler[CreateUser, CreateUserResult]
	ModifyUser                Handler[ModifyUser, Result]
	IssueKeypair              Handler[IssueKeypair, IssueKeypairResult]
	ModifyKeypair             Handler[ModifyKeypair, Result]
	SetKeypairActive          Handler[SetKeypairActive, Result]
	RotateKeypairSecret       Handler[RotateKeypairSecret, RotateKeypairSecretResult]
	SetMainKeypair            Handler[SetMainKeypair, Result]
	CreateKeypairPolicy       Handler[CreateKeypairPolicy, Result]
	ModifyKeypairPolicy       Handler[ModifyKeypairPolicy, Result]
	CreateUserPolicy          Handler[CreateUserPolicy, Result]
	ModifyUserPolicy          Handler[ModifyUserPolicy, Result]
	CreateProjectPolicy       Handler[CreateProjectPolicy, Result]
	ModifyProjectPolicy       Handler[ModifyProjectPolicy, Result]
	CreateResourceGroup       Handler[CreateResourceGroup, Result]
	ModifyResourceGroup       Handler[ModifyResourceGroup, Result]
	GrantResourceGroupAccess  Handler[GrantResourceGroupAccess, Result]
	RevokeResourceGroupAccess Handler[RevokeResourceGroupAccess, Result]
	RegisterImage             Handler[RegisterImage, Result]
	ModifyImage               Handler[ModifyImage, Result]
	ForgetImage               Handler[ForgetImage, Result]
	// Run-time settings (see change_settings.go).
	ChangeSettings Handler[ChangeSettings, Result]

	// API tokens (login and bearer tokens; see issue_token.go).
	IssueToken  Handler[IssueToken, IssueTokenResult]
	RevokeToken Handler[RevokeToken, Result]
	// Agent enrollment: bus credentials for the agent's own key (see
	// offer_agent_enrollment.go).
	OfferAgentEnrollment  Handler[OfferAgentEnrollment, Result]
	EnrollAgent           Handler[EnrollAgent, Result]
	RevokeAgentEnrollment Handler[RevokeAgentEnrollment, Result]
	// Virtual folders (see vfolder.go).
	CreateVFolder           Handler[CreateVFolder, VFolderResult]
	RenameVFolder           Handler[RenameVFolder, VFolderResult]
	InviteToVFolder         Handler[InviteToVFolder, InviteToVFolderResult]
	AcceptVFolderInvitation Handler[AcceptVFolderInvitation, VFolderResult]
	RejectVFolderInvitation Handler[RejectVFolderInvitation, VFolderResult]
	CancelVFolderInvitation Handler[CancelVFolderInvitation, VFolderResult]
	LeaveVFolder            Handler[LeaveVFolder, VFolderResult]
	ShareVFolder            Handler[ShareVFolder, VFolderResult]
	UnshareVFolder          Handler[UnshareVFolder, VFolderResult]
	CloneVFolder            Handler[CloneVFolder, VFolderResult]
	FinishVFolderClone      Handler[FinishVFolderClone, VFolderResult]
	TrashVFolder            Handler[TrashVFolder, VFolderResult]
	RestoreVFolder          Handler[RestoreVFolder, VFolderResult]
	DeleteVFolderForever    Handler[DeleteVFolderForever, VFolderResult]
	FinishVFolderDelete     Handler[FinishVFolderDelete, VFolderResult]
	PurgeVFolder            Handler[PurgeVFolder, VFolderResult]
	AuthorizeVFolderFiles   Handler[AuthorizeVFolderFiles, VFolderFilesGrant]

	names []string
}

// Names returns the registered command names, in registration order.
func (h *Handlers) Names() []string { return append([]string(nil), h.names...) }

// Defaults applied by Options.WithDefaults.
const (
	DefaultMaxAttempts = 8
	DefaultBackoff     = 2 * time.Millisecond
	DefaultMaxBackoff  = 100 * time.Millisecond
	// DefaultEmailReservationGrace: see Options.EmailReservationGrace.
	DefaultEmailReservationGrace = 30 * time.Second
)

// Options tune the handlers. The zero value is valid: every zero field
// takes its default.
type Options struct {
	// MaxAttempts bounds the load-decide-append attempts of one command
	// when its appends keep meeting concurrent writers (default 8: with
	// the default backoff, 16 writers racing for one agent all get through
	// on this project's 2-core machine, where 5 attempts let some give up).
	MaxAttempts int
	// Backoff is the ceiling of the random wait after the first conflict;
	// it doubles with every attempt up to MaxBackoff (defaults 2ms, 100ms).
	Backoff    time.Duration
	MaxBackoff time.Duration
	// NewID makes session, kernel and user ids (default: UUIDv7).
	NewID func() uuid.UUID
	// PasswordHasher hashes the passwords of CreateUser and ModifyUser.
	// Without one, those commands fail (KindInternal) when a password is
	// given; every other command works.
	PasswordHasher PasswordHasher
	// Quotas answers RequestSession's admission checks (see QuotaSource);
	// nil admits every request and leaves quotas to the scheduler.
	Quotas QuotaSource
	// EmailReservationGrace is how old an e-mail reservation whose user
	// was never created must be before another CreateUser may take it
	// over (default 30s; see domain.EmailReservation). The same grace
	// applies to a vfolder name claimed by a create that never finished
	// (see domain.VFolderIndex.TakeOver).
	EmailReservationGrace time.Duration
	// VFolders are the outside parts of the virtual folder commands
	// (tenancy, storage, the shared-folder directory). Without them those
	// commands fail with KindUnavailable and sessions mount nothing.
	VFolders VFolderPorts
	// DefaultVFolderQuota is the quota in bytes of a folder created or
	// cloned without one (0: none; such a folder is then bounded only by
	// its owner's quota scope, if any).
	DefaultVFolderQuota int64
	// Settings are the run-time settings' defaults: the values of the
	// start-up flags that seed them (keys missing take their built-in
	// default). A value an admin set (ChangeSettings) wins over them.
	Settings domain.SettingDefaults
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.MaxAttempts == 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.Backoff == 0 {
		o.Backoff = DefaultBackoff
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.NewID == nil {
		o.NewID = newUUIDv7
	}
	if o.EmailReservationGrace == 0 {
		o.EmailReservationGrace = DefaultEmailReservationGrace
	}
	return o
}

// Validate reports every problem of o at once.
func (o Options) Validate() error {
	var errs []error
	if o.MaxAttempts < 0 || o.MaxAttempts > 100 {
		errs = append(errs, fmt.Errorf("max attempts %d: must be between 1 and 100", o.MaxAttempts))
	}
	if o.Backoff < 0 || o.MaxBackoff < 0 {
		errs = append(errs, fmt.Errorf("backoff %v / max backoff %v: must not be negative", o.Backoff, o.MaxBackoff))
	}
	if o.EmailReservationGrace < 0 {
		errs = append(errs, fmt.Errorf("e-mail reservation grace %v: must not be negative", o.EmailReservationGrace))
	}
	if o.DefaultVFolderQuota < 0 {
		errs = append(errs, fmt.Errorf("default vfolder quota %d: must not be negative", o.DefaultVFolderQuota))
	}
	if err := o.Settings.Check("commands.options"); err != nil {
		errs = append(errs, fmt.Errorf("settings: %w", err))
	}
	return errors.Join(errs...)
}

// NewHandlers builds every handler over one store and one clock. It
// refuses a nil store or clock, invalid options, and two handlers for one
// command name.
func NewHandlers(store EventStore, clock func() time.Time, opts Options) (*Handlers, error) {
	var errs []error
	if store == nil {
		errs = append(errs, errors.New("commands: no event store"))
	}
	if clock == nil {
		errs = append(errs, errors.New("commands: no clock"))
	}
	if err := opts.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("commands: %w", err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	opts = opts.WithDefaults()
	retry := retryPolicy{attempts: opts.MaxAttempts, backoff: opts.Backoff, maxBackoff: opts.MaxBackoff}
	d := deps{
		sessions: repository[*domain.Session]{store: store, rehydrate: domain.RehydrateSession, retry: retry},
		agents:   repository[*domain.Agent]{store: store, rehydrate: domain.RehydrateAgent, retry: retry},
		clock:    clock,
		newID:    opts.NewID,
		tenancy:  newTenancyRepos(store, retry),
		hasher:   opts.PasswordHasher,
		grace:    opts.EmailReservationGrace,
		quotas:   opts.Quotas,
	}
	d.settings = settingsSource{repo: repository[*domain.Settings]{store: store, rehydrate: domain.RehydrateSettings, retry: retry}, defaults: opts.Settings}
	d.vfolderParts = vfolderParts{vfolders: newVFolderRepos(store, retry), vf: opts.VFolders, newID: opts.NewID,
		grace: opts.EmailReservationGrace, vfDefaultQuota: opts.DefaultVFolderQuota, clock: clock}
	r := newRegistry()
	h := &Handlers{
		RequestSession:        register(r, newRequestSessionHandler(d.sessions, admission{d.quotas}, d.vfolderParts)),
		TerminateSession:      register(r, newTerminateSessionHandler(d.sessions, releaser{d.agents}, d.clock)),
		CancelPendingSession:  register(r, newCancelPendingSessionHandler(d.sessions, d.clock)),
		UpdatePendingSession:  register(r, newUpdatePendingSessionHandler(d.sessions, d.clock)),
		UpdatePendingSessions: register(r, newUpdatePendingSessionsHandler(d.sessions, d.clock)),
		ScheduleSession:       register(r, newScheduleSessionHandler(planApplier{d.sessions, releaser{d.agents}}, d.clock)),
		ScheduleSessions:      register(r, newScheduleSessionsHandler(planApplier{d.sessions, releaser{d.agents}}, d.clock)),
		RegisterAgent:         register(r, newRegisterAgentHandler(d.agents, d.clock)),
		ReportKernelStatus:    register(r, newReportKernelStatusHandler(d.sessions, releaser{d.agents}, d.clock)),
		MarkAgentLost:         register(r, newMarkAgentLostHandler(d.sessions, releaser{d.agents}, d.clock)),
		DisconnectAgent:       register(r, newDisconnectAgentHandler(d.sessions, d.agents, d.clock)),
		ReconnectAgent:        register(r, newReconnectAgentHandler(d.sessions, d.agents, d.clock)),
		ReleaseAllocation:     register(r, newReleaseAllocationHandler(d.sessions, releaser{d.agents}, d.clock)),
		ForceTerminateSession: register(r, newForceTerminateSessionHandler(d.sessions, releaser{d.agents}, d.clock)),

		CreateDomain:              register(r, newCreateDomainHandler(d.domains, d.clock)),
		ModifyDomain:              register(r, newModifyDomainHandler(d.domains, d.clock)),
		CreateProject:             register(r, newCreateProjectHandler(d.domains, d.projects, d.projectPolicies, d.clock)),
		ModifyProject:             register(r, newModifyProjectHandler(d.projects, d.projectPolicies, d.clock)),
		AddProjectMember:          register(r, newAddProjectMemberHandler(d.projects, d.users, d.clock)),
		RemoveProjectMember:       register(r, newRemoveProjectMemberHandler(d.projects, d.clock)),
		CreateUser:                register(r, newCreateUserHandler(d.domains, d.users, d.emails, d.userPolicies, d.newID, d.grace, passwords{d.hasher}, d.clock)),
		ModifyUser:                register(r, newModifyUserHandler(d.users, d.userPolicies, passwords{d.hasher}, d.clock)),
		IssueKeypair:              register(r, newIssueKeypairHandler(d.users, d.keypairs, d.keypairPolicies, d.settings, d.clock)),
		ModifyKeypair:             register(r, newModifyKeypairHandler(d.keypairPolicies, keypairLookup{d.keypairs, d.users}, d.clock)),
		SetKeypairActive:          register(r, newSetKeypairActiveHandler(keypairLookup{d.keypairs, d.users}, d.clock)),
		RotateKeypairSecret:       register(r, newRotateKeypairSecretHandler(keypairLookup{d.keypairs, d.users}, d.clock)),
		SetMainKeypair:            register(r, newSetMainKeypairHandler(keypairLookup{d.keypairs, d.users}, d.clock)),
		CreateKeypairPolicy:       register(r, newCreateKeypairPolicyHandler(d.keypairPolicies, d.clock)),
		ModifyKeypairPolicy:       register(r, newModifyKeypairPolicyHandler(d.keypairPolicies, d.clock)),
		CreateUserPolicy:          register(r, newCreateUserPolicyHandler(d.userPolicies, d.clock)),
		ModifyUserPolicy:          register(r, newModifyUserPolicyHandler(d.userPolicies, d.clock)),
		CreateProjectPolicy:       register(r, newCreateProjectPolicyHandler(d.projectPolicies, d.clock)),
		ModifyProjectPolicy:       register(r, newModifyProjectPolicyHandler(d.projectPolicies, d.clock)),
		CreateResourceGroup:       register(r, newCreateResourceGroupHandler(d.resourceGroups, d.clock)),
		ModifyResourceGroup:       register(r, newModifyResourceGroupHandler(d.resourceGroups, d.clock)),
		GrantResourceGroupAccess:  register(r, newGrantResourceGroupAccessHandler(d.domains, d.projects, d.keypairs, d.resourceGroups, d.clock)),
		RevokeResourceGroupAccess: register(r, newRevokeResourceGroupAccessHandler(d.resourceGroups, d.clock)),
		RegisterImage:             register(r, newRegisterImageHandler(d.images, d.clock)),
		ModifyImage:               register(r, newModifyImageHandler(d.images, d.clock)),
		ForgetImage:               register(r, newForgetImageHandler(d.images, d.clock)),
		ChangeSettings:            register(r, newChangeSettingsHandler(d.settings, d.keypairPolicies, d.clock)),

		IssueToken:              register(r, newIssueTokenHandler(d.users, d.tokens, d.newID, d.clock)),
		RevokeToken:             register(r, newRevokeTokenHandler(d.users, d.tokens, d.clock)),
		OfferAgentEnrollment:    register(r, newOfferAgentEnrollmentHandler(d.enrollments, d.clock)),
		EnrollAgent:             register(r, newEnrollAgentHandler(d.enrollments, d.clock)),
		RevokeAgentEnrollment:   register(r, newRevokeAgentEnrollmentHandler(d.enrollments, d.clock)),
		CreateVFolder:           register(r, newCreateVFolderHandler(d.vfolderParts)),
		RenameVFolder:           register(r, newRenameVFolderHandler(d.vfolderParts)),
		InviteToVFolder:         register(r, newInviteToVFolderHandler(d.vfolderParts)),
		AcceptVFolderInvitation: register(r, newAcceptVFolderInvitationHandler(d.vfolderParts)),
		RejectVFolderInvitation: register(r, newRejectVFolderInvitationHandler(d.vfolderParts)),
		CancelVFolderInvitation: register(r, newCancelVFolderInvitationHandler(d.vfolderParts)),
		LeaveVFolder:            register(r, newLeaveVFolderHandler(d.vfolderParts)),
		ShareVFolder:            register(r, newShareVFolderHandler(d.vfolderParts)),
		UnshareVFolder:          register(r, newUnshareVFolderHandler(d.vfolderParts)),
		CloneVFolder:            register(r, newCloneVFolderHandler(d.vfolderParts)),
		FinishVFolderClone:      register(r, newFinishVFolderCloneHandler(d.vfolderParts.vfolders, d.clock)),
		TrashVFolder:            register(r, newTrashVFolderHandler(d.vfolderParts)),
		RestoreVFolder:          register(r, newRestoreVFolderHandler(d.vfolderParts)),
		DeleteVFolderForever:    register(r, newDeleteVFolderForeverHandler(d.vfolderParts)),
		FinishVFolderDelete:     register(r, newFinishVFolderDeleteHandler(d.vfolderParts.vfolders, d.clock)),
		PurgeVFolder:            register(r, newPurgeVFolderHandler(d.vfolderParts)),
		AuthorizeVFolderFiles:   register(r, newAuthorizeVFolderFilesHandler(d.vfolderParts)),
	}
	if len(r.errs) > 0 {
		return nil, errors.Join(r.errs...)
	}
	h.names = r.names
	return h, nil
}

// deps is every dependency of the handlers, assembled once by
// NewHandlers, which hands each handler only its part through the
// handler's constructor (newCreateDomainHandler(domains, now),
// newTerminateSessionHandler(sessions, releaser, now), ...). Parts shared
// by several handlers are small types: clock, releaser, passwords,
// keypairLookup, admission, planApplier, and vfolderParts for the virtual
// folder commands (and RequestSession's mounts).
type deps struct {
	sessions repository[*domain.Session]
	agents   repository[*domain.Agent]
	clock
	newID func() uuid.UUID
	tenancy
	hasher PasswordHasher
	grace  time.Duration
	quotas QuotaSource
	// vfolderParts are the vfolder repositories, their outside ports and
	// settings.
	vfolderParts vfolderParts
	// settings are the run-time settings' stream and defaults.
	settings settingsSource
}

// tenancy holds the repositories of the tenancy aggregates.
type tenancy struct {
	domains         repository[*domain.Domain]
	projects        repository[*domain.Project]
	users           repository[*domain.User]
	emails          repository[*domain.EmailReservation]
	keypairs        repository[*domain.Keypair]
	keypairPolicies repository[*domain.KeypairPolicy]
	userPolicies    repository[*domain.StoragePolicy]
	projectPolicies repository[*domain.StoragePolicy]
	resourceGroups  repository[*domain.ResourceGroup]
	images          repository[*domain.Image]
	tokens          repository[*domain.Token]
	enrollments     repository[*domain.AgentEnrollment]
}

func newTenancyRepos(store EventStore, retry retryPolicy) tenancy {
	return tenancy{
		domains:         repository[*domain.Domain]{store: store, rehydrate: domain.RehydrateDomain, retry: retry},
		projects:        repository[*domain.Project]{store: store, rehydrate: domain.RehydrateProject, retry: retry},
		users:           repository[*domain.User]{store: store, rehydrate: domain.RehydrateUser, retry: retry},
		emails:          repository[*domain.EmailReservation]{store: store, rehydrate: domain.RehydrateEmailReservation, retry: retry},
		keypairs:        repository[*domain.Keypair]{store: store, rehydrate: domain.RehydrateKeypair, retry: retry},
		keypairPolicies: repository[*domain.KeypairPolicy]{store: store, rehydrate: domain.RehydrateKeypairPolicy, retry: retry},
		userPolicies:    repository[*domain.StoragePolicy]{store: store, rehydrate: domain.RehydrateUserPolicy, retry: retry},
		projectPolicies: repository[*domain.StoragePolicy]{store: store, rehydrate: domain.RehydrateProjectPolicy, retry: retry},
		resourceGroups:  repository[*domain.ResourceGroup]{store: store, rehydrate: domain.RehydrateResourceGroup, retry: retry},
		images:          repository[*domain.Image]{store: store, rehydrate: domain.RehydrateImage, retry: retry},
		tokens:          repository[*domain.Token]{store: store, rehydrate: domain.RehydrateToken, retry: retry},
		enrollments:     repository[*domain.AgentEnrollment]{store: store, rehydrate: domain.RehydrateAgentEnrollment, retry: retry},
	}
}

// clock is the handlers' time source.
type clock func() time.Time

// now reads the clock once per command, in UTC without a monotonic part,
// so the time stored is the time folded back.
func (c clock) now() time.Time { return c().UTC() }

func newUUIDv7() uuid.UUID {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.New()
	}
	return id
}
