package bootstrap

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
	"github.com/cairnhq/cairn/infra/auth/token"
	"github.com/cairnhq/cairn/projections/tenancy"
)

// Names of what Provision creates.
const (
	Email        = "admin@cairn.local"
	DefaultScope = "default" // the domain, project, resource group and policies
	// TokenTTL is the lifetime of the superadmin's bearer token; a later
	// start replaces it when it has expired.
	TokenTTL = 365 * 24 * time.Hour
)

// Deps is what Provision works with: the command handlers (with a
// password hasher), the tenancy read model and a way to wait until it
// reflects a position (its projector).
type Deps struct {
	DataDir  string
	APIURL   string
	Commands *commands.Handlers
	Tenancy  *tenancy.ReadModel
	Waiter   interface {
		WaitFor(ctx context.Context, position uint64) error
	}
	// Images are registered (if they are not yet) for Architecture.
	Images       []string
	Architecture string
	// Local are images found on this machine, registered (if they are not
	// yet) before Images with their labels, so that their service ports
	// come from their ai.backend.service-ports label, and their own
	// architecture (Architecture when empty). One whose labels are
	// refused is left out with a warning: a bad local image does not stop
	// the start.
	Local []LocalImage
	Clock func() time.Time
	// Logger receives warnings (default slog.Default()).
	Logger *slog.Logger
}

// LocalImage is an image present on this machine: its reference, the
// architecture its runtime reports and its labels.
type LocalImage struct {
	Reference    string
	Architecture string
	Labels       map[string]string
}

// system is who provisions: a superadmin without a user.
var system = commands.Principal{Role: domain.RoleSuperadmin, Domain: DefaultScope}

// Provision makes sure the superadmin and the default scope exist and the
// credentials file works (see the package documentation); created is true
// when the file was written anew (not only its API URL refreshed). It
// returns once the read model shows what it wrote, so the token works at
// once.
func Provision(ctx context.Context, d Deps) (c Credentials, created bool, err error) {
	if d.Commands == nil || d.Tenancy == nil || d.Waiter == nil {
		return Credentials{}, false, errors.New("bootstrap: commands, tenancy read model and waiter are required")
	}
	if d.Clock == nil {
		d.Clock = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	p := &provisioner{Deps: d, md: commands.Metadata{Actor: "bootstrap", RequestID: "bootstrap-" + uuid.NewString()}}
	if err := p.scope(ctx); err != nil {
		return Credentials{}, false, fmt.Errorf("bootstrap: default scope: %w", err)
	}
	if err := p.settle(ctx); err != nil {
		return Credentials{}, false, err
	}
	c, found, err := loadIfAny(d.DataDir)
	if err != nil {
		return Credentials{}, false, err
	}
	if !found || !p.works(ctx, c) {
		if c, err = p.superadmin(ctx); err != nil {
			return Credentials{}, false, fmt.Errorf("bootstrap: superadmin: %w", err)
		}
		created = true
	} else if !p.tokenWorks(ctx, c.Token) {
		if c.Token, err = p.token(ctx, uuid.MustParse(c.UserID)); err != nil {
			return Credentials{}, false, fmt.Errorf("bootstrap: token: %w", err)
		}
		created = true
	}
	if err := p.settle(ctx); err != nil {
		return Credentials{}, false, err
	}
	stale := c.APIURL != d.APIURL
	c.APIURL = d.APIURL
	err = Save(d.DataDir, c)
	if err != nil && !created && eventstore.IsStorageFull(err) {
		// The file's credentials work; only its API URL is out of date.
		// A full disk must not keep the server from starting read-only.
		if stale {
			d.Logger.Warn("the data disk is full: credentials file not updated, its api_url is out of date", "api_url", d.APIURL, "error", err)
		}
		return c, false, nil
	}
	return c, created, err
}

type provisioner struct {
	Deps
	md   commands.Metadata
	last uint64
}

// step records a command's position and tolerates a conflict (already
// done by an earlier start).
func (p *provisioner) step(res commands.Result, err error) error {
	if errors.Is(err, domain.ErrConflict) {
		return nil
	}
	if err != nil {
		return err
	}
	p.last = max(p.last, res.Position)
	return nil
}

// settle waits until the read model shows every write so far.
func (p *provisioner) settle(ctx context.Context) error {
	if err := p.Waiter.WaitFor(ctx, p.last); err != nil {
		return fmt.Errorf("bootstrap: wait for the read model: %w", err)
	}
	return nil
}

// scope creates the policies, the default domain, project and resource
// group, and registers the images (the local ones first).
func (p *provisioner) scope(ctx context.Context) error {
	h, md := p.Commands, p.md
	steps := []func() (commands.Result, error){
		func() (commands.Result, error) {
			return h.CreateKeypairPolicy.Handle(ctx, md, commands.CreateKeypairPolicy{Actor: system, Name: DefaultScope,
				Spec: domain.KeypairPolicySpec{DefaultForUnspecified: domain.UnspecifiedUnlimited, MaxContainersPerSession: 8}})
		},
		func() (commands.Result, error) {
			return h.CreateUserPolicy.Handle(ctx, md, commands.CreateUserPolicy{Actor: system, Name: DefaultScope})
		},
		func() (commands.Result, error) {
			return h.CreateProjectPolicy.Handle(ctx, md, commands.CreateProjectPolicy{Actor: system, Name: DefaultScope})
		},
		func() (commands.Result, error) {
			return h.CreateDomain.Handle(ctx, md, commands.CreateDomain{Actor: system, Spec: domain.DomainSpec{Name: DefaultScope, Description: "created at the first start"}})
		},
		func() (commands.Result, error) {
			return h.CreateProject.Handle(ctx, md, commands.CreateProject{Actor: system, Spec: domain.ProjectSpec{Domain: DefaultScope, Name: DefaultScope, ResourcePolicy: DefaultScope}})
		},
		func() (commands.Result, error) {
			return h.CreateResourceGroup.Handle(ctx, md, commands.CreateResourceGroup{Actor: system, Name: DefaultScope, Spec: domain.ResourceGroupSpec{IsPublic: true}})
		},
		func() (commands.Result, error) {
			return h.GrantResourceGroupAccess.Handle(ctx, md, commands.GrantResourceGroupAccess{Actor: system, ResourceGroup: DefaultScope,
				Grantee: domain.Grantee{Kind: domain.GranteeDomain, Name: DefaultScope}})
		},
	}
	for _, s := range steps {
		if err := p.step(s()); err != nil {
			return err
		}
	}
	if err := p.localImages(ctx); err != nil {
		return err
	}
	for _, ref := range p.Images {
		if err := p.step(h.RegisterImage.Handle(ctx, md, commands.RegisterImage{Actor: system, Reference: ref, Architecture: p.Architecture})); err != nil {
			return err
		}
	}
	return nil
}

// localImages registers the local images that are not registered yet,
// with their labels.
func (p *provisioner) localImages(ctx context.Context) error {
	for _, img := range p.Local {
		arch := img.Architecture
		if arch == "" {
			arch = p.Architecture
		}
		res, err := p.Commands.RegisterImage.Handle(ctx, p.md, commands.RegisterImage{Actor: system, Reference: img.Reference,
			Architecture: arch, Spec: domain.ImageSpec{Labels: img.Labels}})
		if errors.Is(err, domain.ErrInvalid) {
			p.Logger.Warn("bootstrap: a local image is not registered", "image", img.Reference, "err", err)
			continue
		}
		if err := p.step(res, err); err != nil {
			return fmt.Errorf("image %s: %w", img.Reference, err)
		}
	}
	return nil
}

// works reports whether the file's superadmin, keypair and secret are
// still good (the token is checked apart: it alone can be replaced).
func (p *provisioner) works(ctx context.Context, c Credentials) bool {
	id, err := uuid.Parse(c.UserID)
	if err != nil {
		return false // a file from before tenancy
	}
	u, err := p.Tenancy.GetUser(ctx, id)
	if err != nil || u.Role != domain.RoleSuperadmin || u.Status != domain.UserActive {
		return false
	}
	cr, err := p.Tenancy.Credentials(ctx, c.AccessKey)
	return err == nil && cr.UserID == id && cr.SecretKey == c.SecretKey && cr.MaySign()
}

// tokenWorks reports whether the token is known, not revoked and valid
// for at least a day.
func (p *provisioner) tokenWorks(ctx context.Context, secret string) bool {
	_, digest, err := token.Parse(secret)
	if err != nil {
		return false
	}
	g, err := p.Tenancy.TokenByDigest(ctx, digest.String())
	return err == nil && !g.Revoked() && g.ExpiresAt.After(p.Clock().Add(24*time.Hour))
}

// superadmin creates (or resets) admin@cairn.local with a fresh password,
// keypair and token, a member of the default project.
func (p *provisioner) superadmin(ctx context.Context) (Credentials, error) {
	h, md := p.Commands, p.md
	c := Credentials{Email: Email, Password: rand.Text(), Domain: DefaultScope, Project: DefaultScope, ResourceGroup: DefaultScope}
	var id uuid.UUID
	existing, err := p.Tenancy.UserByEmail(ctx, Email)
	switch {
	case err == nil:
		id = existing.ID
		role, status := domain.RoleSuperadmin, domain.UserActive
		if err := p.step(h.ModifyUser.Handle(ctx, md, commands.ModifyUser{Actor: system, UserID: id, Password: &c.Password,
			Changes: domain.UserChanges{Role: &role, Status: &status}})); err != nil {
			return Credentials{}, err
		}
		c.Domain = existing.Domain
	case errors.Is(err, domain.ErrNotFound):
		res, err := h.CreateUser.Handle(ctx, md, commands.CreateUser{Actor: system, Password: c.Password,
			Spec: domain.UserSpec{Email: Email, Username: "admin", FullName: "Cairn superadmin", Domain: DefaultScope,
				Role: domain.RoleSuperadmin, ResourcePolicy: DefaultScope}})
		if err != nil {
			return Credentials{}, err
		}
		id, p.last = res.UserID, max(p.last, res.Position)
	default:
		return Credentials{}, err
	}
	c.UserID = id.String()
	if c.Domain == DefaultScope {
		if err := p.step(h.AddProjectMember.Handle(ctx, md, commands.AddProjectMember{Actor: system, Domain: DefaultScope, Project: DefaultScope, UserID: id})); err != nil {
			return Credentials{}, err
		}
	}
	kp, err := h.IssueKeypair.Handle(ctx, md, commands.IssueKeypair{Actor: system, UserID: id, ResourcePolicy: DefaultScope, Main: true})
	if err != nil {
		return Credentials{}, err
	}
	c.AccessKey, c.SecretKey, p.last = kp.AccessKey, kp.SecretKey, max(p.last, kp.Position)
	if c.Token, err = p.token(ctx, id); err != nil {
		return Credentials{}, err
	}
	return c, nil
}

// token issues the superadmin a bearer token.
func (p *provisioner) token(ctx context.Context, user uuid.UUID) (string, error) {
	secret, tok, err := token.Issue(token.Bearer, p.Clock(), TokenTTL)
	if err != nil {
		return "", err
	}
	res, err := p.Commands.IssueToken.Handle(ctx, p.md, commands.IssueToken{Actor: system, UserID: user, Kind: domain.TokenBearer,
		Digest: tok.Digest.String(), Description: "bootstrap (credentials.json)", ExpiresAt: tok.ExpiresAt})
	if err != nil {
		return "", err
	}
	p.last = max(p.last, res.Position)
	return secret, nil
}
