package tenancy

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Queries return KindNotFound for a missing object (wait for the
// command's position first, see projections.Projector.WaitFor),
// KindUnavailable when the database fails, and KindInternal for a row
// that does not decode.

// GetDomain returns one domain.
func (m *ReadModel) GetDomain(ctx context.Context, name string) (Domain, error) {
	return one(ctx, m, "tenancy.get-domain", "domain", scanDomain, m.sql.getDomain, name)
}

// ListDomains returns every domain, by name.
func (m *ReadModel) ListDomains(ctx context.Context) ([]Domain, error) {
	return list(ctx, m, "tenancy.list-domains", scanDomain, m.sql.listDomains)
}

// GetProject returns one project.
func (m *ReadModel) GetProject(ctx context.Context, domainName, name string) (Project, error) {
	return one(ctx, m, "tenancy.get-project", "project", scanProject, m.sql.getProject, domainName, name)
}

// ListProjects returns the projects of a domain by name, or every project
// by domain and name when domainName is empty.
func (m *ReadModel) ListProjects(ctx context.Context, domainName string) ([]Project, error) {
	if domainName == "" {
		return list(ctx, m, "tenancy.list-projects", scanProject, m.sql.listProjects)
	}
	return list(ctx, m, "tenancy.list-projects", scanProject, m.sql.listProjectsIn, domainName)
}

// ProjectMembers returns the members of a project, by user id.
func (m *ReadModel) ProjectMembers(ctx context.Context, domainName, project string) ([]Member, error) {
	return list(ctx, m, "tenancy.project-members", scanMember, m.sql.members, domainName, project)
}

// ProjectsOf returns the memberships of a user, by domain and project.
func (m *ReadModel) ProjectsOf(ctx context.Context, user uuid.UUID) ([]Member, error) {
	return cachedList(ctx, m, "tenancy.projects-of", scanMember, m.sql.projectsOf, user.String())
}

// GetUser returns one user (without its password hash).
func (m *ReadModel) GetUser(ctx context.Context, id uuid.UUID) (User, error) {
	return one(ctx, m, "tenancy.get-user", "user", scanUser, m.sql.getUser, id.String())
}

// UserFilter selects the users ListUsers returns; zero fields select all.
type UserFilter struct {
	Domain string
	Role   domain.Role
	Status domain.UserStatus
}

// ListUsers returns the users matching f (without password hashes), by
// e-mail address.
func (m *ReadModel) ListUsers(ctx context.Context, f UserFilter) ([]User, error) {
	const op = "tenancy.list-users"
	var (
		conds []string
		args  []any
	)
	add := func(column string, v string) {
		args = append(args, v)
		conds = append(conds, column+" = $"+strconv.Itoa(len(args)))
	}
	if f.Domain != "" {
		add("domain", f.Domain)
	}
	if f.Role != "" {
		if !f.Role.Valid() {
			return nil, domain.Invalid(op, "role", "unknown role %q", f.Role)
		}
		add("role", string(f.Role))
	}
	if f.Status != "" {
		if !f.Status.Valid() {
			return nil, domain.Invalid(op, "status", "unknown status %q", f.Status)
		}
		add("status", string(f.Status))
	}
	if len(conds) == 0 {
		conds = append(conds, "1 = 1")
	}
	return list(ctx, m, op, scanUser, fmt.Sprintf(m.sql.listUsersFmt, strings.Join(conds, " AND ")), args...)
}

// Login returns the user with the e-mail address (any case) and its
// password hash, for the password check. Nothing else reads the hash.
func (m *ReadModel) Login(ctx context.Context, email string) (Login, error) {
	return one(ctx, m, "tenancy.login", "user", func(r projections.Row) (Login, error) {
		var l Login
		u, err := scanUserWith(r, &l.PasswordHash)
		l.User = u
		return l, err
	}, m.sql.userByEmail, domain.EmailKey(email))
}

// UserByEmail returns the user with the e-mail address (any case).
func (m *ReadModel) UserByEmail(ctx context.Context, email string) (User, error) {
	l, err := m.Login(ctx, email)
	return l.User, err
}

// GetKeypair returns one keypair (without its secret key).
func (m *ReadModel) GetKeypair(ctx context.Context, accessKey string) (Keypair, error) {
	return one(ctx, m, "tenancy.get-keypair", "keypair", scanKeypair, m.sql.getKeypair, accessKey)
}

// KeypairFilter selects the keypairs ListKeypairs returns; zero fields
// select all.
type KeypairFilter struct {
	UserID uuid.UUID
	Domain string
}

// ListKeypairs returns the keypairs matching f (without secret keys),
// oldest first.
func (m *ReadModel) ListKeypairs(ctx context.Context, f KeypairFilter) ([]Keypair, error) {
	var (
		conds []string
		args  []any
	)
	if f.UserID != uuid.Nil {
		args = append(args, f.UserID.String())
		conds = append(conds, "k.user_id = $"+strconv.Itoa(len(args)))
	}
	if f.Domain != "" {
		args = append(args, f.Domain)
		conds = append(conds, "k.domain = $"+strconv.Itoa(len(args)))
	}
	if len(conds) == 0 {
		conds = append(conds, "1 = 1")
	}
	return list(ctx, m, "tenancy.list-keypairs", scanKeypair, fmt.Sprintf(m.sql.listKeypairsFmt, strings.Join(conds, " AND ")), args...)
}

// Credentials returns what the request signature verifier needs of an
// access key, secret key included. Check MaySign before trusting it.
func (m *ReadModel) Credentials(ctx context.Context, accessKey string) (Credentials, error) {
	return one(ctx, m, "tenancy.credentials", "keypair", func(r projections.Row) (Credentials, error) {
		var (
			c            Credentials
			user         string
			role, status string
		)
		if err := r.Scan(&c.AccessKey, &c.SecretKey, &c.IsActive, &c.RateLimit, &c.ResourcePolicy, &user, &c.Email, &role, &c.Domain, &status); err != nil {
			return c, err
		}
		c.Role, c.UserStatus = domain.Role(role), domain.UserStatus(status)
		var err error
		c.UserID, err = uuid.Parse(user)
		return c, err
	}, m.sql.credentials, accessKey)
}

// GetKeypairPolicy returns one keypair resource policy.
func (m *ReadModel) GetKeypairPolicy(ctx context.Context, name string) (KeypairPolicy, error) {
	return one(ctx, m, "tenancy.get-keypair-policy", "keypair policy", scanKeypairPolicy, m.sql.getKeypairPolicy, name)
}

// ListKeypairPolicies returns every keypair resource policy, by name.
func (m *ReadModel) ListKeypairPolicies(ctx context.Context) ([]KeypairPolicy, error) {
	return list(ctx, m, "tenancy.list-keypair-policies", scanKeypairPolicy, m.sql.listKeypairPolicies)
}

// GetUserPolicy returns one user resource policy.
func (m *ReadModel) GetUserPolicy(ctx context.Context, name string) (StoragePolicy, error) {
	return one(ctx, m, "tenancy.get-user-policy", "user policy", scanStoragePolicy, m.sql.getUserPolicy, name)
}

// ListUserPolicies returns every user resource policy, by name.
func (m *ReadModel) ListUserPolicies(ctx context.Context) ([]StoragePolicy, error) {
	return list(ctx, m, "tenancy.list-user-policies", scanStoragePolicy, m.sql.listUserPolicies)
}

// GetProjectPolicy returns one project resource policy.
func (m *ReadModel) GetProjectPolicy(ctx context.Context, name string) (StoragePolicy, error) {
	return one(ctx, m, "tenancy.get-project-policy", "project policy", scanStoragePolicy, m.sql.getProjectPolicy, name)
}

// ListProjectPolicies returns every project resource policy, by name.
func (m *ReadModel) ListProjectPolicies(ctx context.Context) ([]StoragePolicy, error) {
	return list(ctx, m, "tenancy.list-project-policies", scanStoragePolicy, m.sql.listProjectPolicies)
}

// GetResourceGroup returns one resource group with its access list.
func (m *ReadModel) GetResourceGroup(ctx context.Context, name string) (ResourceGroup, error) {
	const op = "tenancy.get-resource-group"
	g, err := one(ctx, m, op, "resource group", scanResourceGroup, m.sql.getResourceGroup, name)
	if err != nil {
		return g, err
	}
	g.Access, err = list(ctx, m, op, func(r projections.Row) (domain.Grantee, error) {
		var g domain.Grantee
		var kind string
		err := r.Scan(&kind, &g.Name)
		g.Kind = domain.GranteeKind(kind)
		return g, err
	}, m.sql.access, name)
	return g, err
}

// ListResourceGroups returns every resource group with its access list,
// by name.
func (m *ReadModel) ListResourceGroups(ctx context.Context) ([]ResourceGroup, error) {
	const op = "tenancy.list-resource-groups"
	groups, err := list(ctx, m, op, scanResourceGroup, m.sql.listResourceGroups)
	if err != nil {
		return nil, err
	}
	type entry struct {
		group string
		g     domain.Grantee
	}
	access, err := list(ctx, m, op, func(r projections.Row) (entry, error) {
		var e entry
		var kind string
		err := r.Scan(&e.group, &kind, &e.g.Name)
		e.g.Kind = domain.GranteeKind(kind)
		return e, err
	}, m.sql.allAccess)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*ResourceGroup, len(groups))
	for i := range groups {
		byName[groups[i].Name] = &groups[i]
	}
	for _, a := range access {
		if g := byName[a.group]; g != nil {
			g.Access = append(g.Access, a.g)
		}
	}
	return groups, nil
}

// AllowedResourceGroups returns, by name, the active resource groups a
// session of the domain, project and access key may use: those whose
// access list names any of them (session types are checked on the
// group's AllowedSessionTypes by the caller).
func (m *ReadModel) AllowedResourceGroups(ctx context.Context, domainName, project, accessKey string) ([]string, error) {
	return cachedList(ctx, m, "tenancy.allowed-resource-groups", func(r projections.Row) (string, error) {
		var s string
		return s, r.Scan(&s)
	}, m.sql.allowedResourceGroups, domainName, domain.ProjectKey(domainName, project), accessKey)
}

// GetImage returns one registered image.
func (m *ReadModel) GetImage(ctx context.Context, reference, architecture string) (Image, error) {
	return one(ctx, m, "tenancy.get-image", "image", scanImage, m.sql.getImage, reference, domain.NormalizeArchitecture(architecture))
}

// ListImages returns every registered image, by reference and
// architecture.
func (m *ReadModel) ListImages(ctx context.Context) ([]Image, error) {
	return list(ctx, m, "tenancy.list-images", scanImage, m.sql.listImages)
}

// list runs a query and scans every row; never nil (projections.QueryList).
func list[T any](ctx context.Context, m *ReadModel, op string, scan func(projections.Row) (T, error), query string, args ...any) ([]T, error) {
	return projections.QueryList(ctx, m.db, op, scan, query, args...)
}

// decodeJSON decodes the JSON columns of a row.
func decodeJSON(pairs ...any) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		text := pairs[i].(string)
		if err := json.Unmarshal([]byte(text), pairs[i+1]); err != nil {
			return fmt.Errorf("tenancy: JSON column %d: %w", i/2, err)
		}
	}
	return nil
}

func scanDomain(r projections.Row) (Domain, error) {
	var (
		d            Domain
		slots, hosts string
		created, mod projections.NullTime
		position     int64
	)
	if err := r.Scan(&d.Name, &d.Description, &d.IsActive, &slots, &hosts, &created, &mod, &position); err != nil {
		return d, err
	}
	d.CreatedAt, d.ModifiedAt, d.Position = created.Time, mod.Time, uint64(position)
	return d, decodeJSON(slots, &d.TotalResourceSlots, hosts, &d.AllowedVFolderHosts)
}

func scanProject(r projections.Row) (Project, error) {
	var (
		p            Project
		slots, hosts string
		created, mod projections.NullTime
		position     int64
	)
	if err := r.Scan(&p.Domain, &p.Name, &p.Description, &p.IsActive, &slots, &hosts, &p.ResourcePolicy, &created, &mod, &position); err != nil {
		return p, err
	}
	p.CreatedAt, p.ModifiedAt, p.Position = created.Time, mod.Time, uint64(position)
	return p, decodeJSON(slots, &p.TotalResourceSlots, hosts, &p.AllowedVFolderHosts)
}

func scanMember(r projections.Row) (Member, error) {
	var (
		m     Member
		user  string
		added projections.NullTime
	)
	if err := r.Scan(&m.Domain, &m.Project, &user, &added); err != nil {
		return m, err
	}
	m.AddedAt = added.Time
	var err error
	m.UserID, err = uuid.Parse(user)
	return m, err
}

func scanUser(r projections.Row) (User, error) { return scanUserWith(r) }

// scanUserWith scans userColumns and then extra.
func scanUserWith(r projections.Row, extra ...any) (User, error) {
	var (
		u                User
		id, role, status string
		created, mod     projections.NullTime
		position         int64
	)
	dest := append([]any{&id, &u.Email, &u.Username, &u.FullName, &u.Domain, &role, &status, &u.MainAccessKey,
		&u.ResourcePolicy, &created, &mod, &position}, extra...)
	if err := r.Scan(dest...); err != nil {
		return u, err
	}
	u.Role, u.Status = domain.Role(role), domain.UserStatus(status)
	u.CreatedAt, u.ModifiedAt, u.Position = created.Time, mod.Time, uint64(position)
	var err error
	u.ID, err = uuid.Parse(id)
	return u, err
}

func scanKeypair(r projections.Row) (Keypair, error) {
	var (
		k                     Keypair
		user                  string
		created, mod, rotated projections.NullTime
		position              int64
	)
	if err := r.Scan(&k.AccessKey, &user, &k.Domain, &k.ResourcePolicy, &k.RateLimit, &k.IsActive, &k.IsMain,
		&created, &mod, &rotated, &position); err != nil {
		return k, err
	}
	k.CreatedAt, k.ModifiedAt, k.SecretRotatedAt, k.Position = created.Time, mod.Time, rotated.Ptr(), uint64(position)
	var err error
	k.UserID, err = uuid.Parse(user)
	return k, err
}

func scanKeypairPolicy(r projections.Row) (KeypairPolicy, error) {
	var (
		p            KeypairPolicy
		spec         string
		created, mod projections.NullTime
		position     int64
	)
	if err := r.Scan(&p.Name, &spec, &created, &mod, &position); err != nil {
		return p, err
	}
	p.CreatedAt, p.ModifiedAt, p.Position = created.Time, mod.Time, uint64(position)
	return p, decodeJSON(spec, &p.KeypairPolicySpec)
}

func scanStoragePolicy(r projections.Row) (StoragePolicy, error) {
	var (
		p            StoragePolicy
		created, mod projections.NullTime
		position     int64
	)
	if err := r.Scan(&p.Name, &p.MaxVFolderCount, &p.MaxQuotaScopeSize, &created, &mod, &position); err != nil {
		return p, err
	}
	p.CreatedAt, p.ModifiedAt, p.Position = created.Time, mod.Time, uint64(position)
	return p, nil
}

func scanResourceGroup(r projections.Row) (ResourceGroup, error) {
	var (
		g            ResourceGroup
		spec         string
		created, mod projections.NullTime
		position     int64
	)
	if err := r.Scan(&g.Name, &spec, &created, &mod, &position); err != nil {
		return g, err
	}
	g.CreatedAt, g.ModifiedAt, g.Position, g.Access = created.Time, mod.Time, uint64(position), []domain.Grantee{}
	return g, decodeJSON(spec, &g.ResourceGroupSpec)
}

func scanImage(r projections.Row) (Image, error) {
	var (
		i            Image
		spec         string
		created, mod projections.NullTime
		position     int64
	)
	if err := r.Scan(&i.Reference, &i.Architecture, &spec, &created, &mod, &position); err != nil {
		return i, err
	}
	i.RegisteredAt, i.ModifiedAt, i.Position = created.Time, mod.Time, uint64(position)
	return i, decodeJSON(spec, &i.ImageSpec)
}
