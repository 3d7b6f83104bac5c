package tenancy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections"
)

// Apply implements projections.Projection. It mirrors the folds of the
// tenancy aggregates; the object an event is about comes from its stream
// name (commands.DomainStream and friends).
func (m *ReadModel) Apply(_ context.Context, tx projections.Tx, ev projections.Event) error {
	pos := int64(ev.Position)
	if ev.Position > m.applied.Load() {
		m.applied.Store(ev.Position)
	}
	d := tx.Dialect()
	w := writer{tx: tx, err: nil}
	switch e := ev.Payload.(type) {
	case domain.DomainCreated:
		w.exec(m.sql.insertDomain, e.Name, e.Description, true, w.json(e.TotalResourceSlots), w.json(hosts(e.AllowedVFolderHosts)), d.Time(e.At), pos)
	case domain.DomainModified:
		w.exec(m.sql.modifyDomain, w.key(ev, domain.StreamDomain), e.Description, w.json(e.TotalResourceSlots), w.json(hosts(e.AllowedVFolderHosts)), d.Time(e.At), pos)
	case domain.DomainActivated:
		w.exec(m.sql.activeDomain, w.key(ev, domain.StreamDomain), true, d.Time(e.At), pos)
	case domain.DomainDeactivated:
		w.exec(m.sql.activeDomain, w.key(ev, domain.StreamDomain), false, d.Time(e.At), pos)

	case domain.ProjectCreated:
		w.exec(m.sql.insertProject, e.Domain, e.Name, e.Description, true, w.json(e.TotalResourceSlots),
			w.json(hosts(e.AllowedVFolderHosts)), e.ResourcePolicy, d.Time(e.At), pos)
	case domain.ProjectModified:
		dn, pn := w.project(ev)
		w.exec(m.sql.modifyProject, dn, pn, e.Description, w.json(e.TotalResourceSlots), w.json(hosts(e.AllowedVFolderHosts)),
			e.ResourcePolicy, d.Time(e.At), pos)
	case domain.ProjectActivated:
		dn, pn := w.project(ev)
		w.exec(m.sql.activeProject, dn, pn, true, d.Time(e.At), pos)
	case domain.ProjectDeactivated:
		dn, pn := w.project(ev)
		w.exec(m.sql.activeProject, dn, pn, false, d.Time(e.At), pos)
	case domain.ProjectMemberAdded:
		dn, pn := w.project(ev)
		w.exec(m.sql.addMember, dn, pn, e.UserID.String(), d.Time(e.At), pos)
	case domain.ProjectMemberRemoved:
		dn, pn := w.project(ev)
		w.exec(m.sql.removeMember, dn, pn, e.UserID.String())

	case domain.UserCreated:
		w.exec(m.sql.insertUser, e.UserID.String(), e.Email, domain.EmailKey(e.Email), e.Username, e.FullName, e.Domain,
			string(e.Role), string(e.Status), e.PasswordHash, e.ResourcePolicy, d.Time(e.At), pos)
	case domain.UserModified:
		w.exec(m.sql.modifyUser, w.user(ev), e.Username, e.FullName, string(e.Role), string(e.Status), e.ResourcePolicy, d.Time(e.At), pos)
	case domain.UserPasswordChanged:
		w.exec(m.sql.userPassword, w.user(ev), e.PasswordHash, d.Time(e.At), pos)
	case domain.UserMainKeypairSet:
		w.exec(m.sql.userMainKey, w.user(ev), e.AccessKey, d.Time(e.At), pos)

	case domain.KeypairIssued:
		w.exec(m.sql.insertKeypair, e.AccessKey, e.SecretKey, e.UserID.String(), e.Domain, e.ResourcePolicy, e.RateLimit, true, d.Time(e.At), pos)
	case domain.KeypairModified:
		w.exec(m.sql.modifyKeypair, w.key(ev, domain.StreamKeypair), e.ResourcePolicy, e.RateLimit, d.Time(e.At), pos)
	case domain.KeypairActivated:
		w.exec(m.sql.activeKeypair, w.key(ev, domain.StreamKeypair), true, d.Time(e.At), pos)
	case domain.KeypairDeactivated:
		w.exec(m.sql.activeKeypair, w.key(ev, domain.StreamKeypair), false, d.Time(e.At), pos)
	case domain.KeypairSecretRotated:
		w.exec(m.sql.rotateSecret, w.key(ev, domain.StreamKeypair), e.SecretKey, d.Time(e.At), pos)

	case domain.KeypairPolicyCreated:
		w.exec(m.sql.upsertKeypairPolicy, e.Name, w.json(e.KeypairPolicySpec), d.Time(e.At), pos)
	case domain.KeypairPolicyModified:
		w.exec(m.sql.upsertKeypairPolicy, w.key(ev, domain.StreamKeypairPolicy), w.json(e.KeypairPolicySpec), d.Time(e.At), pos)
	case domain.UserPolicyCreated:
		w.exec(m.sql.upsertUserPolicy, e.Name, e.MaxVFolderCount, e.MaxQuotaScopeSize, d.Time(e.At), pos)
	case domain.UserPolicyModified:
		w.exec(m.sql.upsertUserPolicy, w.key(ev, domain.StreamUserPolicy), e.MaxVFolderCount, e.MaxQuotaScopeSize, d.Time(e.At), pos)
	case domain.ProjectPolicyCreated:
		w.exec(m.sql.upsertProjectPolicy, e.Name, e.MaxVFolderCount, e.MaxQuotaScopeSize, d.Time(e.At), pos)
	case domain.ProjectPolicyModified:
		w.exec(m.sql.upsertProjectPolicy, w.key(ev, domain.StreamProjectPolicy), e.MaxVFolderCount, e.MaxQuotaScopeSize, d.Time(e.At), pos)

	case domain.ResourceGroupCreated:
		w.exec(m.sql.insertResourceGroup, e.Name, e.IsActive, w.json(e.ResourceGroupSpec), d.Time(e.At), pos)
	case domain.ResourceGroupModified:
		w.exec(m.sql.modifyResourceGroup, w.key(ev, domain.StreamResourceGroup), e.IsActive, w.json(e.ResourceGroupSpec), d.Time(e.At), pos)
	case domain.ResourceGroupAccessGranted:
		w.exec(m.sql.grant, w.key(ev, domain.StreamResourceGroup), string(e.Grantee.Kind), e.Grantee.Name, d.Time(e.At), pos)
	case domain.ResourceGroupAccessRevoked:
		w.exec(m.sql.revoke, w.key(ev, domain.StreamResourceGroup), string(e.Grantee.Kind), e.Grantee.Name)

	case domain.ImageRegistered:
		w.exec(m.sql.upsertImage, e.Reference, e.Architecture, w.json(e.ImageSpec), d.Time(e.At), pos)
	case domain.ImageModified:
		ref, arch := w.image(ev)
		w.exec(m.sql.modifyImage, ref, arch, w.json(e.ImageSpec), d.Time(e.At), pos)
	case domain.ImageForgotten:
		ref, arch := w.image(ev)
		w.exec(m.sql.forgetImage, ref, arch)

	case domain.TokenIssued:
		w.exec(m.sql.insertToken, e.TokenID.String(), e.Digest, e.UserID.String(), string(e.Kind), e.Description,
			d.Time(e.At), d.Time(e.ExpiresAt), pos)
	case domain.TokenRevoked:
		w.exec(m.sql.revokeToken, w.token(ev), d.Time(e.At), pos)
	default:
		return fmt.Errorf("tenancy: unexpected event %s", ev.Type)
	}
	return w.err
}

// writer queues the writes of one event and keeps the first error in
// building them (a stream name that is not the event's kind, a value
// that does not encode), so Apply reads as a list of statements.
type writer struct {
	tx  projections.Tx
	err error
}

func (w *writer) exec(query string, args ...any) {
	if w.err == nil {
		w.tx.Queue(query, args...)
	}
}

// json encodes v for a JSON column (TEXT on SQLite, jsonb on PostgreSQL).
func (w *writer) json(v any) string {
	b, err := json.Marshal(v)
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("tenancy: encode %T: %w", v, err)
	}
	return string(b)
}

// key returns the natural key of the event's stream, which must be of
// kind k.
func (w *writer) key(ev projections.Event, k domain.StreamKind) string {
	s, err := domain.ParseStreamOf(k, ev.Stream)
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("tenancy: %s: %w", ev.Type, err)
	}
	return s.ID
}

// project returns the domain and name of a project stream.
func (w *writer) project(ev projections.Event) (string, string) {
	d, p, ok := domain.SplitProjectKey(w.key(ev, domain.StreamProject))
	if !ok && w.err == nil {
		w.err = fmt.Errorf("tenancy: %s in stream %q, not a project stream", ev.Type, ev.Stream)
	}
	return d, p
}

// user returns the user id of a user stream, as stored.
func (w *writer) user(ev projections.Event) string {
	return w.key(ev, domain.StreamUser)
}

// token returns the id of a token stream, as stored.
func (w *writer) token(ev projections.Event) string {
	return w.key(ev, domain.StreamToken)
}

// image returns the reference and architecture of an image stream
// (image-<reference>@<architecture>; the architecture has no '@').
func (w *writer) image(ev projections.Event) (string, string) {
	k := w.key(ev, domain.StreamImage)
	i := strings.LastIndexByte(k, '@')
	if i <= 0 || i == len(k)-1 {
		if w.err == nil {
			w.err = fmt.Errorf("tenancy: %s in stream %q, not an image stream", ev.Type, ev.Stream)
		}
		return "", ""
	}
	return k[:i], k[i+1:]
}

// hosts keeps allowed_vfolder_hosts an object in JSON, never null.
func hosts(h domain.VFolderHosts) domain.VFolderHosts {
	if h == nil {
		return domain.VFolderHosts{}
	}
	return h
}
