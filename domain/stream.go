package domain

import (
	"strings"

	"github.com/google/uuid"
)

// StreamKind says what a stream is about: an aggregate type, or one of the
// audit trail's two singleton streams. The kind is the stream name's
// prefix, so stored names never change with this type.
type StreamKind string

// Every kind of stream, in the order ParseStream tries them (a kind whose
// name starts with another's is listed first: "user-email" before "user").
const (
	StreamSession         StreamKind = "session"
	StreamAgent           StreamKind = "agent"
	StreamAgentEnrollment StreamKind = "agentkey"
	StreamDomain          StreamKind = "domain"
	StreamProject         StreamKind = "project"
	StreamUserEmail       StreamKind = "user-email"
	StreamUserPolicy      StreamKind = "user-policy"
	StreamUser            StreamKind = "user"
	StreamKeypairPolicy   StreamKind = "keypair-policy"
	StreamKeypair         StreamKind = "keypair"
	StreamProjectPolicy   StreamKind = "project-policy"
	StreamResourceGroup   StreamKind = "resource-group"
	StreamImage           StreamKind = "image"
	StreamToken           StreamKind = "token"
	StreamVFolderOwner    StreamKind = "vfolder-owner"
	StreamVFolder         StreamKind = "vfolder"
	// The audit trail's streams have no id (see AccessLogStream and
	// AuditStream).
	StreamAccessLog StreamKind = "access-log"
	StreamAudit     StreamKind = "audit"
	// The run-time settings have one stream of their own, without an id
	// (see SettingsStream).
	StreamSettings StreamKind = "settings"
)

// streamKinds lists the kinds for ParseStream: longer names that start
// with a shorter one come first, so the longest matching prefix wins.
var streamKinds = []StreamKind{
	StreamSession, StreamAgentEnrollment, StreamAgent, StreamDomain,
	StreamProjectPolicy, StreamProject, StreamUserEmail, StreamUserPolicy, StreamUser,
	StreamKeypairPolicy, StreamKeypair, StreamResourceGroup, StreamImage, StreamToken,
	StreamVFolderOwner, StreamVFolder, StreamAccessLog, StreamAudit, StreamSettings,
}

// singleton reports whether streams of kind k have no id (the audit
// trail's and the settings').
func (k StreamKind) singleton() bool {
	return k == StreamAccessLog || k == StreamAudit || k == StreamSettings
}

// uuidID reports whether the ids of kind k are UUIDs (in their canonical
// form, as uuid.UUID.String writes them).
func (k StreamKind) uuidID() bool {
	return k == StreamSession || k == StreamUser || k == StreamToken || k == StreamVFolder
}

// Stream names one stream of the event store: its kind and the id of what
// it holds ("" for the audit trail's singletons). String formats the name
// the store knows it by ("<kind>-<id>", or "<kind>" for a singleton).
type Stream struct {
	Kind StreamKind
	ID   string
}

// String is the stream's name in the store.
func (s Stream) String() string {
	if s.ID == "" && s.Kind.singleton() {
		return string(s.Kind)
	}
	return string(s.Kind) + "-" + s.ID
}

// UUID returns the id of a stream whose ids are UUIDs (sessions, users,
// tokens, folders); for a stream parsed by ParseStream it cannot fail.
func (s Stream) UUID() (uuid.UUID, error) {
	if !s.Kind.uuidID() {
		return uuid.Nil, Errorf("domain.stream", KindInvalid, "stream %s: a %s stream is not named by a UUID", s, s.Kind)
	}
	id, err := uuid.Parse(s.ID)
	if err != nil {
		return uuid.Nil, &Error{Op: "domain.stream", Kind: KindInvalid, Message: "stream " + s.String(), Err: err}
	}
	return id, nil
}

// ParseStream is the one parser of stream names: it returns the kind and
// id of name, or a KindInvalid error for a name of no known kind, an
// empty id, an id on a singleton stream, or a UUID-named kind whose id is
// not a canonical UUID. Every name the constructors below make parses
// back to the same Stream.
func ParseStream(name string) (Stream, error) {
	const op = "domain.ParseStream"
	var refusal *Error
	for _, k := range streamKinds {
		if k.singleton() {
			if name == string(k) {
				return Stream{Kind: k}, nil
			}
			continue
		}
		n := len(k)
		if len(name) <= n || name[n] != '-' || name[:n] != string(k) {
			continue
		}
		id := name[n+1:]
		if why := k.checkID(id); why != "" {
			// A longer kind's prefix may hide a shorter one's id
			// ("project-policy-x/y" is project "policy-x/y"): try on.
			if refusal == nil {
				refusal = Errorf(op, KindInvalid, "stream %q: %s", name, why)
			}
			continue
		}
		return Stream{Kind: k, ID: id}, nil
	}
	if refusal != nil {
		return Stream{}, refusal
	}
	return Stream{}, Errorf(op, KindInvalid, "stream %q: no known kind of stream", name)
}

// checkID says why id cannot name a stream of kind k ("" if it can).
func (k StreamKind) checkID(id string) string {
	switch {
	case id == "":
		return "no " + string(k) + " id"
	case k.uuidID():
		if !canonicalUUID(id) {
			return "the " + string(k) + " id is not a canonical UUID"
		}
	case k == StreamProject:
		if _, _, ok := SplitProjectKey(id); !ok {
			return "the project id is not <domain>/<name>"
		}
	case k == StreamProjectPolicy:
		if strings.Contains(id, "/") {
			return "a policy name has no '/'"
		}
	}
	return ""
}

// canonicalUUID reports whether id is a UUID as uuid.UUID.String writes it
// (36 characters, dashes in place, lower-case hex), without allocating:
// the scheduler parses the stream of every event it folds.
func canonicalUUID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// ParseStreamOf parses name and checks that it is a stream of kind k.
func ParseStreamOf(k StreamKind, name string) (Stream, error) {
	s, err := ParseStream(name)
	if err != nil {
		return Stream{}, err
	}
	if s.Kind != k {
		return Stream{}, Errorf("domain.ParseStream", KindInvalid, "stream %q: a %s stream, not a %s stream", name, s.Kind, k)
	}
	return s, nil
}

// SessionStream is the stream of one session.
func SessionStream(id uuid.UUID) Stream { return Stream{StreamSession, id.String()} }

// AgentStream is the stream of one agent.
func AgentStream(id string) Stream { return Stream{StreamAgent, id} }

// AgentEnrollmentStream is the stream of an agent's enrollment: its
// one-time offers, the user keys it enrolled and those revoked. Its kind,
// "agentkey", has no dash, so it can never be an agent's stream.
func AgentEnrollmentStream(agentID string) Stream { return Stream{StreamAgentEnrollment, agentID} }

// Tenancy aggregates are named by natural key, so that creating one with
// the expected revision "no stream" keeps the key unique.

// DomainStream is the stream of a domain.
func DomainStream(name string) Stream { return Stream{StreamDomain, name} }

// ProjectStream is the stream of a project of a domain
// ("project-<domain>/<name>"; names cannot contain '/').
func ProjectStream(domainName, name string) Stream {
	return Stream{StreamProject, ProjectKey(domainName, name)}
}

// UserStream is the stream of a user.
func UserStream(id uuid.UUID) Stream { return Stream{StreamUser, id.String()} }

// UserEmailStream is the reservation stream of an e-mail address (see
// EmailReservation).
func UserEmailStream(email string) Stream { return Stream{StreamUserEmail, EmailKey(email)} }

// KeypairStream is the stream of a keypair.
func KeypairStream(accessKey string) Stream { return Stream{StreamKeypair, accessKey} }

// KeypairPolicyStream, UserPolicyStream and ProjectPolicyStream are the
// streams of resource policies.
func KeypairPolicyStream(name string) Stream { return Stream{StreamKeypairPolicy, name} }
func UserPolicyStream(name string) Stream    { return Stream{StreamUserPolicy, name} }
func ProjectPolicyStream(name string) Stream { return Stream{StreamProjectPolicy, name} }

// ResourceGroupStream is the stream of a resource group.
func ResourceGroupStream(name string) Stream { return Stream{StreamResourceGroup, name} }

// ImageStream is the stream of an image for one architecture.
func ImageStream(reference, architecture string) Stream {
	return Stream{StreamImage, reference + "@" + architecture}
}

// TokenStream is the stream of an API token.
func TokenStream(id uuid.UUID) Stream { return Stream{StreamToken, id.String()} }

// VFolderStream is the stream of folder id.
func VFolderStream(id uuid.UUID) Stream { return Stream{StreamVFolder, id.String()} }

// Stream is the owner's folder index stream, which keeps names unique per
// owner and counts folders against max_vfolder_count (see VFolderIndex).
func (o VFolderOwner) Stream() Stream {
	return Stream{StreamVFolderOwner, string(o.Kind) + "-" + o.ID}
}

// SettingsStream is the one stream of the run-time settings.
func SettingsStream() Stream { return Stream{Kind: StreamSettings} }
