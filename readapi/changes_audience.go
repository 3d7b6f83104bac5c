package readapi

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"slices"
	"sync"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/eventstore"
)

// Kinds of object a change names: each is an object one of the GET routes
// serves, and the id is the one that route takes.
const (
	KindSession       = "session"        // GET /v1/sessions/{id}
	KindVFolder       = "vfolder"        // GET /v1/vfolders/{id}
	KindAgent         = "agent"          // GET /v1/agents (by id)
	KindDomain        = "domain"         // GET /v1/domains/{name}
	KindProject       = "project"        // GET /v1/projects/{name}?domain=; the id is "<domain>/<name>"
	KindUser          = "user"           // GET /v1/users/{id}
	KindKeypair       = "keypair"        // GET /v1/keypairs/{access key}
	KindKeypairPolicy = "keypair_policy" // GET /v1/keypair-policies/{name}
	KindUserPolicy    = "user_policy"    // GET /v1/user-policies/{name}
	KindProjectPolicy = "project_policy" // GET /v1/project-policies/{name}
	KindResourceGroup = "resource_group" // GET /v1/resource-groups/{name}
	KindImage         = "image"          // GET /v1/images/{id}
)

// changeKinds are the kinds a stream may filter on (?kinds=).
var changeKinds = []string{KindAgent, KindDomain, KindImage, KindKeypair, KindKeypairPolicy, KindProject,
	KindProjectPolicy, KindResourceGroup, KindSession, KindUser, KindUserPolicy, KindVFolder}

// audience says who may see an object through the GET routes, so that a
// change is sent to exactly those callers. Superadmins see everything.
type audience struct {
	// everyone: every authenticated caller (agents, images, policies).
	everyone bool
	// readers: the admins and monitors of this domain.
	readers string
	// members: every caller of this domain (the domain itself).
	members string
	// users by id (an owner, a folder's members, a user itself).
	users []string
	// projects by key "<domain>/<name>": their members.
	projects []string
	// grantees: callers an access list entry names (resource groups).
	grantees []domain.Grantee
}

// seesChange reports whether the caller may see the object of c.
func (u Caller) seesChange(c change) bool {
	a := c.audience
	switch {
	case u.IsSuperadmin(), a.everyone:
		return true
	case a.readers != "" && u.ReadsDomain(a.readers):
		return true
	case a.members != "" && a.members == u.Domain:
		return true
	case slices.Contains(a.users, u.UserID):
		return true
	}
	for _, key := range a.projects {
		if d, p, ok := domain.SplitProjectKey(key); ok && d == u.Domain && u.MemberOf(p) {
			return true
		}
	}
	for _, g := range a.grantees {
		if u.granted(g) {
			return true
		}
	}
	return false
}

// classify names the object an event changed and who may see it, from the
// read models (which reflect the event: the feed waited for them). Events
// of no object a GET route serves (the access log, tokens, internal
// indexes) are not changes. An object the read models no longer show
// (a purged folder) or cannot answer for goes to superadmins only.
func (a *API) classify(ctx context.Context, ev eventstore.RecordedEvent) (change, bool) {
	s, err := domain.ParseStream(ev.Stream)
	if err != nil {
		return change{}, false
	}
	c := change{ID: s.ID, Position: ev.Position, Type: ev.Type}
	switch s.Kind {
	case domain.StreamSession:
		c.Kind = KindSession
		err = a.sessionAudience(ctx, s, &c.audience)
	case domain.StreamVFolder:
		if !a.VFolders.configured() {
			return change{}, false
		}
		c.Kind = KindVFolder
		err = a.folderAudience(ctx, s, ev, &c.audience)
	case domain.StreamAgent:
		c.Kind, c.audience.everyone = KindAgent, true
	case domain.StreamDomain:
		c.Kind, c.audience.members = KindDomain, s.ID
	case domain.StreamProject:
		c.Kind = KindProject
		if d, _, ok := domain.SplitProjectKey(s.ID); ok {
			c.audience.readers, c.audience.projects = d, []string{s.ID}
		}
	case domain.StreamUser:
		c.Kind = KindUser
		err = a.userAudience(ctx, s, &c.audience)
	case domain.StreamKeypair:
		c.Kind = KindKeypair
		k, kerr := a.Tenancy.GetKeypair(ctx, s.ID)
		c.audience.readers, c.audience.users, err = k.Domain, []string{k.UserID.String()}, kerr
	case domain.StreamKeypairPolicy:
		c.Kind, c.audience.everyone = KindKeypairPolicy, true
	case domain.StreamUserPolicy:
		c.Kind, c.audience.everyone = KindUserPolicy, true
	case domain.StreamProjectPolicy:
		c.Kind, c.audience.everyone = KindProjectPolicy, true
	case domain.StreamImage:
		c.Kind, c.audience.everyone = KindImage, true
		c.ID = imageIDOfStream(s.ID)
	case domain.StreamResourceGroup:
		c.Kind = KindResourceGroup
		g, gerr := a.Tenancy.GetResourceGroup(ctx, s.ID)
		c.audience.grantees, err = g.Access, gerr
	default:
		return change{}, false
	}
	if err != nil {
		if !errors.Is(err, domain.ErrNotFound) && ctx.Err() == nil {
			a.Logger.Warn("change feed: cannot tell who may see a change; superadmins only",
				slog.String("stream", ev.Stream), slog.Uint64("position", ev.Position), slog.Any("error", err))
		}
		c.audience = audience{}
	}
	return c, true
}

// sessionAudience: its domain's admins and monitors and its owner, which
// never change, so they are remembered (sessionAudiences) rather than read
// for each of the session's events.
func (a *API) sessionAudience(ctx context.Context, s domain.Stream, out *audience) error {
	id, err := s.UUID()
	if err != nil {
		return err
	}
	if known, ok := a.changes.sessions.get(id); ok {
		*out = known
		return nil
	}
	sess, err := a.Sessions.GetSession(ctx, id)
	if err != nil {
		return err
	}
	out.readers, out.users = sess.Domain, []string{sess.Owner.UserID}
	a.changes.sessions.put(id, *out)
	return nil
}

// sessionAudiences remembers the audiences of recent sessions, at most
// maxSessionAudiences (then it starts afresh: a bound, not a cache policy).
type sessionAudiences struct {
	mu sync.Mutex
	m  map[uuid.UUID]audience
}

const maxSessionAudiences = 1 << 16

func (s *sessionAudiences) get(id uuid.UUID) (audience, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.m[id]
	return a, ok
}

func (s *sessionAudiences) put(id uuid.UUID, a audience) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m) >= maxSessionAudiences {
		s.m = make(map[uuid.UUID]audience)
	}
	s.m[id] = a
}

// folderAudience: the owner (a user, or a project's members), the users it
// is shared with, and its domain's admins and monitors: the relations of
// GET /v1/vfolders/{id}. The invitee of an invitation event receives it
// too (its GET /v1/vfolder-invitations changed).
func (a *API) folderAudience(ctx context.Context, s domain.Stream, ev eventstore.RecordedEvent, out *audience) error {
	id, err := s.UUID()
	if err != nil {
		return err
	}
	f, err := a.VFolders.Folders.Get(ctx, id)
	if err != nil {
		return err
	}
	users, err := a.VFolders.Folders.Users(ctx, id)
	if err != nil {
		return err
	}
	out.readers = f.Owner.Domain
	switch f.Owner.Kind {
	case domain.VFolderOwnedByUser:
		out.users = append(out.users, f.Owner.ID)
		for _, u := range users {
			out.users = append(out.users, u.UserID)
		}
	case domain.VFolderOwnedByProject:
		out.projects = []string{f.Owner.ID}
	}
	if invitee, ok := a.invitee(ctx, ev); ok {
		out.users = append(out.users, invitee)
	}
	return nil
}

// invitee is the user an invitation event of a folder concerns.
func (a *API) invitee(ctx context.Context, ev eventstore.RecordedEvent) (string, bool) {
	var id uuid.UUID
	switch ev.Type {
	case domain.TypeVFolderInvited, domain.TypeVFolderInvitationAccepted, domain.TypeVFolderInvitationRejected, domain.TypeVFolderInvitationCancelled:
	default:
		return "", false
	}
	e, err := domain.DecodeEvent(ev.Type, ev.Version, ev.Data)
	if err != nil {
		return "", false
	}
	switch e := e.(type) {
	case domain.VFolderInvited:
		return e.Invitation.Invitee, e.Invitation.Invitee != ""
	case domain.VFolderInvitationAccepted:
		id = e.InvitationID
	case domain.VFolderInvitationRejected:
		id = e.InvitationID
	case domain.VFolderInvitationCancelled:
		id = e.InvitationID
	}
	inv, err := a.VFolders.Folders.GetInvitation(ctx, id)
	if err != nil {
		return "", false
	}
	return inv.Invitee, true
}

func (a *API) userAudience(ctx context.Context, s domain.Stream, out *audience) error {
	id, err := uuid.Parse(s.ID)
	if err != nil {
		return err
	}
	u, err := a.Tenancy.GetUser(ctx, id)
	if err != nil {
		return err
	}
	out.readers, out.users = u.Domain, []string{u.ID.String()}
	return nil
}

// imageIDOfStream is the route id of an image from its stream's id,
// "<reference>@<architecture>": ImageID of the two parts.
func imageIDOfStream(id string) string { return base64.RawURLEncoding.EncodeToString([]byte(id)) }
