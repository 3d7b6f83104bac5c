package vfolders

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Queries return KindNotFound for a missing folder or invitation (wait
// for the command's position first, see projections.Projector.WaitFor),
// KindUnavailable when the database fails, and KindInternal for a row
// that does not decode. They do not authorize: callers decide who may see
// what (Visible computes it).

// Get returns one folder.
func (m *ReadModel) Get(ctx context.Context, id uuid.UUID) (Folder, error) {
	return one(ctx, m, "vfolders.get", "virtual folder", scanFolder, m.sql.getFolder, id.String())
}

// Stored is where one folder's data is, for summing an owner's usage.
type Stored struct {
	ID     uuid.UUID
	Host   string
	Status domain.VFolderStatus
}

// StoredBy returns where each folder of owner (of every status) keeps its
// data: only what a usage sum needs, read from one index, so that an owner
// of thousands of folders costs milliseconds.
func (m *ReadModel) StoredBy(ctx context.Context, owner domain.VFolderOwner) ([]Stored, error) {
	return list(ctx, m, "vfolders.stored-by", func(r projections.Row) (Stored, error) {
		var s Stored
		var id, status string
		if err := r.Scan(&id, &s.Host, &status); err != nil {
			return s, err
		}
		s.Status = domain.VFolderStatus(status)
		var err error
		s.ID, err = uuid.Parse(id)
		return s, err
	}, m.sql.storedBy, string(owner.Kind), owner.ID)
}

// Users returns the users a folder is shared with: members and per-user
// permissions, by kind and user id.
func (m *ReadModel) Users(ctx context.Context, id uuid.UUID) ([]User, error) {
	return list(ctx, m, "vfolders.users", func(r projections.Row) (User, error) {
		var u User
		var perm string
		err := r.Scan(&u.UserID, &u.Kind, &perm)
		u.Permission = domain.VFolderPermission(perm)
		return u, err
	}, m.sql.users, id.String())
}

// SharedWithNamed returns the ids of the user folders named name shared
// with user (commands.VFolderDirectory).
func (m *ReadModel) SharedWithNamed(ctx context.Context, user, name string) ([]uuid.UUID, error) {
	return list(ctx, m, "vfolders.shared-named", scanID, m.sql.sharedNamed, user, name)
}

// PendingJobs returns the folders still cloning or delete-ongoing, and the
// log position the answer reflects (vfolderjobs.Pending). It fails when
// the projection has no checkpoint yet (projections.Setup never ran).
func (m *ReadModel) PendingJobs(ctx context.Context) ([]uuid.UUID, uint64, error) {
	const op = "vfolders.pending-jobs"
	rows, err := m.db.Query(ctx, m.sql.pending, Name)
	if err != nil {
		return nil, 0, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	var (
		ids   []uuid.UUID
		pos   int64
		found bool
	)
	for rows.Next() {
		var id string
		if err := rows.Scan(&pos, &id); err != nil {
			return nil, 0, &domain.Error{Op: op, Kind: domain.KindInternal, Err: errors.Join(err, rows.Close())}
		}
		found = true
		if id == "" {
			continue
		}
		u, err := uuid.Parse(id)
		if err != nil {
			return nil, 0, &domain.Error{Op: op, Kind: domain.KindInternal, Err: errors.Join(err, rows.Close())}
		}
		ids = append(ids, u)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, 0, &domain.Error{Op: op, Kind: domain.KindUnavailable, Err: err}
	}
	if !found {
		return nil, 0, domain.Errorf(op, domain.KindUnavailable, "the %s projection has no checkpoint yet", Name)
	}
	return ids, uint64(pos), nil
}

// InvitationsTo returns the invitations a user received, newest first;
// state filters them when not empty.
func (m *ReadModel) InvitationsTo(ctx context.Context, user string, state domain.VFolderInvitationState) ([]Invitation, error) {
	return list(ctx, m, "vfolders.invitations-to", scanInvitation, m.sql.invitationsTo, user, string(state))
}

// InvitationsFrom returns the invitations a user sent, newest first;
// state filters them when not empty.
func (m *ReadModel) InvitationsFrom(ctx context.Context, user string, state domain.VFolderInvitationState) ([]Invitation, error) {
	return list(ctx, m, "vfolders.invitations-from", scanInvitation, m.sql.invitationsFrom, user, string(state))
}

// GetInvitation returns one invitation.
func (m *ReadModel) GetInvitation(ctx context.Context, id uuid.UUID) (Invitation, error) {
	return one(ctx, m, "vfolders.get-invitation", "invitation", scanInvitation, m.sql.getInvitation, id.String())
}

// Filter narrows Visible. Zero fields select everything the viewer sees
// through its own relations (own, shared, project).
type Filter struct {
	// Relations keeps the folders seen through these relations; empty:
	// own, shared and project. RelationDomain adds, for admins and
	// monitors, every folder of their domain (superadmins: of every
	// domain).
	Relations []Relation
	// Statuses keeps the folders in one of these statuses (empty: any).
	Statuses []domain.VFolderStatus
	// Name keeps the folders of this name.
	Name string
	// ID keeps one folder.
	ID uuid.UUID
	// Limit bounds how many folders Page answers (0: all of them; at most
	// MaxListLimit).
	Limit int
	// Cursor is a page's NextCursor, to read the page after it.
	Cursor string
}

// MaxListLimit bounds Filter.Limit.
const MaxListLimit = 1000

// Page is one page of Visible folders, by name.
type Page struct {
	Folders []Visible
	// NextCursor reads the next page; empty on the last one. It is opaque.
	NextCursor string
}

// Page returns the folders v sees (see Filter) a page at a time: Limit
// of them by name (then id) after Cursor, so that a caller with thousands
// of folders never reads them all at once.
func (m *ReadModel) Page(ctx context.Context, v domain.VFolderViewer, f Filter) (Page, error) {
	const op = "vfolders.page"
	if f.Limit < 0 || f.Limit > MaxListLimit {
		return Page{}, domain.Invalid(op, "limit", "must be between 1 and %d", MaxListLimit)
	}
	rows, err := m.Visible(ctx, v, f)
	if err != nil {
		return Page{}, err
	}
	if f.Limit == 0 || len(rows) <= f.Limit {
		return Page{Folders: rows}, nil
	}
	rows = rows[:f.Limit]
	last := rows[len(rows)-1]
	return Page{Folders: rows, NextCursor: encodeCursor(last.Name, last.ID)}, nil
}

// encodeCursor makes the cursor of the page after the folder named name
// with this id: both, separated by a NUL, base64url-encoded.
func encodeCursor(name string, id uuid.UUID) string {
	return base64.RawURLEncoding.EncodeToString([]byte(name + "\x00" + id.String()))
}

// decodeCursor reads a cursor of encodeCursor.
func decodeCursor(op, c string) (string, uuid.UUID, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if i := strings.LastIndexByte(string(raw), 0); i >= 0 {
			if id, err := uuid.Parse(string(raw[i+1:])); err == nil {
				return string(raw[:i]), id, nil
			}
		}
	}
	return "", uuid.Nil, domain.Invalid(op, "cursor", "not a cursor of this list")
}

// Visible returns the folders v sees (see Filter), by name, each with how
// v sees it and v's effective permission: the rules of
// domain.VFolder.EffectivePermission, in one query. With a Limit it
// answers at most one more than Limit (Page tells from it whether there
// is a next page), starting after Cursor.
func (m *ReadModel) Visible(ctx context.Context, v domain.VFolderViewer, f Filter) ([]Visible, error) {
	const op = "vfolders.visible"
	if v.UserID == "" {
		return nil, domain.Invalid(op, "viewer", "no user")
	}
	args := []any{v.UserID}
	arg := func(x any) string {
		args = append(args, x)
		return "$" + strconv.Itoa(len(args))
	}
	own := "(f.owner_kind = 'user' AND f.owner_id = $1)"
	shared := "(f.owner_kind = 'user' AND m.user_id IS NOT NULL)"
	project := "(1 = 0)"
	if len(v.Projects) > 0 {
		ph := make([]string, len(v.Projects))
		for i, p := range v.Projects {
			ph[i] = arg(p)
		}
		project = "(f.owner_kind = 'project' AND f.owner_id IN (" + strings.Join(ph, ", ") + "))"
	}
	// reach: the folders an admin manages or a monitor reads.
	reach := "(1 = 0)"
	switch {
	case v.Superadmin:
		reach = "(1 = 1)"
	case v.DomainAdmin || v.ReadOnly:
		reach = "(f.domain = " + arg(v.Domain) + ")"
	}
	manages := "(1 = 0)"
	switch {
	case v.ReadOnly:
	case v.Superadmin:
		manages = "(1 = 1)"
	case v.DomainAdmin:
		manages = reach
	}

	rels := f.Relations
	if len(rels) == 0 {
		rels = []Relation{RelationOwn, RelationShared, RelationProject}
	}
	// Each relation is a branch of its own, whose condition an index
	// serves in name order (see the schema), so a page reads about Limit
	// rows per branch whatever the number of folders; the branches are
	// merged by UNION, which also drops a folder seen through two of them.
	const sharedBranch = "(u.user_id = $1 AND u.kind = 'member' AND f.id = u.folder_id AND f.owner_kind = 'user')"
	var where []string
	for _, r := range rels {
		var cond string
		switch r {
		case RelationOwn:
			cond = own
		case RelationShared:
			// Driven by the viewer's memberships (an index), not by
			// the folders.
			cond = sharedBranch
		case RelationProject:
			cond = project
		case RelationDomain:
			cond = reach
		default:
			return nil, domain.Invalid(op, "relation", "%q is not one of own, shared, project, domain", r)
		}
		if !slices.Contains(where, cond) && cond != "(1 = 0)" {
			where = append(where, cond)
		}
	}
	if len(where) == 0 {
		where = append(where, "(1 = 0)")
	}
	relation := fmt.Sprintf(`CASE WHEN %s THEN 'own' WHEN %s THEN 'shared' WHEN %s THEN 'project' ELSE 'domain' END`, own, shared, project)
	effective := fmt.Sprintf(`CASE WHEN %s OR %s THEN 'wd'
            WHEN %s THEN m.permission
            WHEN %s THEN COALESCE(o.permission, f.permission)
            ELSE '' END`, manages, own, shared, project)
	if v.ReadOnly {
		effective = "'ro'"
	}
	var extra string
	if len(f.Statuses) > 0 {
		ph := make([]string, len(f.Statuses))
		for i, st := range f.Statuses {
			ph[i] = arg(string(st))
		}
		extra += " AND f.status IN (" + strings.Join(ph, ", ") + ")"
	}
	if f.Name != "" {
		extra += " AND f.name = " + arg(f.Name)
	}
	if f.ID != uuid.Nil {
		extra += " AND f.id = " + arg(f.ID.String())
	}
	if f.Cursor != "" {
		name, id, err := decodeCursor(op, f.Cursor)
		if err != nil {
			return nil, err
		}
		extra += " AND (f.name, f.id) > (" + arg(name) + ", " + arg(id.String()) + ")"
	}
	limit := ""
	if f.Limit > 0 {
		limit = " LIMIT " + arg(f.Limit+1)
	}
	branch := func(cond string) string {
		// The shared branch starts from the viewer's memberships (CROSS
		// JOIN keeps SQLite's planner from starting at the folders).
		from := m.sql.folders
		if cond == sharedBranch {
			from = m.sql.memberFolders
		}
		return fmt.Sprintf(m.sql.visible, relation, effective, from, cond, extra) + " ORDER BY f.name, f.id" + limit
	}
	var query string
	if len(where) == 1 {
		query = branch(where[0])
	} else {
		branches := make([]string, len(where))
		for i, w := range where {
			branches[i] = "SELECT * FROM (" + branch(w) + ") b" + strconv.Itoa(i)
		}
		query = strings.Join(branches, " UNION ") + " ORDER BY name, id" + limit
	}
	return list(ctx, m, op, func(r projections.Row) (Visible, error) {
		var vis Visible
		var rel, eff string
		folder, err := scanFolderWith(r, &rel, &eff)
		vis.Folder, vis.Relation, vis.Effective = folder, Relation(rel), domain.VFolderPermission(eff)
		return vis, err
	}, query, args...)
}

// one runs a single-row query and scans it (projections.QueryOne).
func one[T any](ctx context.Context, m *ReadModel, op, what string, scan func(projections.Row) (T, error), query string, args ...any) (T, error) {
	return projections.QueryOne(ctx, m.db, op, what, scan, query, args...)
}

// list runs a query and scans every row; never nil (projections.QueryList).
func list[T any](ctx context.Context, m *ReadModel, op string, scan func(projections.Row) (T, error), query string, args ...any) ([]T, error) {
	return projections.QueryList(ctx, m.db, op, scan, query, args...)
}

func scanID(r projections.Row) (uuid.UUID, error) {
	var s string
	if err := r.Scan(&s); err != nil {
		return uuid.Nil, err
	}
	return uuid.Parse(s)
}

func scanFolder(r projections.Row) (Folder, error) { return scanFolderWith(r) }

// scanFolderWith scans folderColumns and then extra.
func scanFolderWith(r projections.Row, extra ...any) (Folder, error) {
	var (
		f                                     Folder
		id, kind, mode, perm, cloneOf, status string
		created, mod                          projections.NullTime
		position                              int64
	)
	dest := append([]any{&id, &f.Name, &f.Host, &kind, &f.Owner.ID, &f.Owner.Domain, &f.Creator, &mode, &perm,
		&f.Quota, &f.Cloneable, &cloneOf, &status, &f.StatusMessage, &created, &mod, &position}, extra...)
	if err := r.Scan(dest...); err != nil {
		return f, err
	}
	f.Owner.Kind, f.UsageMode, f.Permission = domain.VFolderOwnerKind(kind), domain.VFolderUsageMode(mode), domain.VFolderPermission(perm)
	f.Status, f.CreatedAt, f.ModifiedAt, f.Position = domain.VFolderStatus(status), created.Time, mod.Time, uint64(position)
	var err error
	if f.ID, err = uuid.Parse(id); err != nil {
		return f, err
	}
	if cloneOf != "" {
		f.CloneOf, err = uuid.Parse(cloneOf)
	}
	return f, err
}

func scanInvitation(r projections.Row) (Invitation, error) {
	var (
		i                       Invitation
		id, folder, perm, state string
		created, mod            projections.NullTime
		position                int64
	)
	if err := r.Scan(&id, &folder, &i.FolderName, &i.Inviter, &i.Invitee, &i.Email, &perm, &state, &created, &mod, &position); err != nil {
		return i, err
	}
	i.Permission, i.State = domain.VFolderPermission(perm), domain.VFolderInvitationState(state)
	i.CreatedAt, i.ModifiedAt, i.Position = created.Time, mod.Time, uint64(position)
	var err error
	if i.ID, err = uuid.Parse(id); err != nil {
		return i, err
	}
	i.FolderID, err = uuid.Parse(folder)
	return i, err
}
