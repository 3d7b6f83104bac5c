package domain

import (
	"time"

	"github.com/google/uuid"
)

// Keypair formats, as Backend.AI makes them: an access key of 20
// characters starting with "AK" (upper-case letters and digits), a secret
// key of 40 characters (letters, digits, '-' and '_').
const (
	AccessKeyLength = 20
	SecretKeyLength = 40
	AccessKeyPrefix = "AK"
)

// KeypairSpec is what a keypair is issued with. The keys are the caller's
// (generated from a cryptographic random source).
type KeypairSpec struct {
	AccessKey string
	SecretKey string
	UserID    uuid.UUID
	// Domain is the owner's domain, copied so that who may administer the
	// keypair is known from its own stream.
	Domain         string
	ResourcePolicy string
	// RateLimit is the number of requests allowed per rate-limit window;
	// 0 means no limit.
	RateLimit int
}

// KeypairChanges are the fields a modification sets; nil leaves a field
// as it is.
type KeypairChanges struct {
	ResourcePolicy *string
	RateLimit      *int
	IsActive       *bool
}

// Keypair is the keypair aggregate (stream keypair-<access key>). Whether
// it is its owner's main keypair is recorded on the user
// (user.main-keypair-set). The zero Keypair does not exist.
type Keypair struct {
	stateOf
	accessKey  string
	secretKey  string
	userID     uuid.UUID
	domainName string
	policy     string
	rateLimit  int
	active     bool
	createdAt  time.Time
	modifiedAt time.Time
	rotatedAt  time.Time
}

func (k *Keypair) AccessKey() string      { return k.accessKey }
func (k *Keypair) SecretKey() string      { return k.secretKey }
func (k *Keypair) UserID() uuid.UUID      { return k.userID }
func (k *Keypair) Domain() string         { return k.domainName }
func (k *Keypair) ResourcePolicy() string { return k.policy }
func (k *Keypair) RateLimit() int         { return k.rateLimit }
func (k *Keypair) IsActive() bool         { return k.active }
func (k *Keypair) CreatedAt() time.Time   { return k.createdAt }
func (k *Keypair) ModifiedAt() time.Time  { return k.modifiedAt }

// SecretRotatedAt is when the secret was last replaced (zero if never).
func (k *Keypair) SecretRotatedAt() time.Time { return k.rotatedAt }

// RehydrateKeypair folds a keypair stream's events.
func RehydrateKeypair(events []RecordedEvent) (*Keypair, error) {
	k := &Keypair{stateOf: stateOf{revision: -1}}
	if err := fold("keypair.rehydrate", events, k); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *Keypair) apply(ev Event) error {
	if _, first := ev.(KeypairIssued); first == k.exists {
		if first {
			return createdTwice("keypair")
		}
		return eventBeforeCreation("keypair")
	}
	switch e := ev.(type) {
	case KeypairIssued:
		k.exists, k.active = true, true
		k.accessKey, k.secretKey, k.userID, k.domainName = e.AccessKey, e.SecretKey, e.UserID, e.Domain
		k.policy, k.rateLimit = e.ResourcePolicy, e.RateLimit
		k.createdAt, k.modifiedAt = e.At, e.At
	case KeypairModified:
		k.policy, k.rateLimit, k.modifiedAt = e.ResourcePolicy, e.RateLimit, e.At
	case KeypairActivated:
		k.active, k.modifiedAt = true, e.At
	case KeypairDeactivated:
		k.active, k.modifiedAt = false, e.At
	case KeypairSecretRotated:
		k.secretKey, k.modifiedAt, k.rotatedAt = e.SecretKey, e.At, e.At
	default:
		return foreignEvent(ev, "keypair")
	}
	return nil
}

// IsAccessKey reports whether s has the form of an access key.
func IsAccessKey(s string) bool {
	if len(s) != AccessKeyLength || s[:len(AccessKeyPrefix)] != AccessKeyPrefix {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// isSecretKey reports whether s has the form of a secret key.
func isSecretKey(s string) bool {
	if len(s) != SecretKeyLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

func (p *problems) checkAccessKey(field, s string) {
	if !IsAccessKey(s) {
		p.bad(field, "not an access key (%d characters: %q then upper-case letters and digits)", AccessKeyLength, AccessKeyPrefix)
	}
}

func (p *problems) checkSecretKey(field, s string) {
	if !isSecretKey(s) {
		// Never echo a secret, even a malformed one.
		p.bad(field, "not a secret key (%d characters: letters, digits, '-' and '_')", SecretKeyLength)
	}
}

func (p *problems) checkRateLimit(field string, v int) {
	if v < 0 || v > MaxRateLimit {
		p.bad(field, "must be between 0 (no limit) and %d, not %d", MaxRateLimit, v)
	}
}

// Issue records a new keypair, active. The owner, its domain and the
// policy are the caller's to check (other streams); an existing keypair
// with that access key is KindConflict.
func (k *Keypair) Issue(spec KeypairSpec, at time.Time) ([]Event, error) {
	const op = "keypair.issue"
	p := &problems{op: op}
	p.checkAccessKey("access_key", spec.AccessKey)
	p.checkSecretKey("secret_key", spec.SecretKey)
	if spec.UserID == uuid.Nil {
		p.bad("user_id", "required")
	}
	p.checkName("domain", spec.Domain)
	p.checkName("resource_policy", spec.ResourcePolicy)
	p.checkRateLimit("rate_limit", spec.RateLimit)
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	if k.exists {
		return nil, alreadyExists(op, "keypair")
	}
	return []Event{KeypairIssued{
		AccessKey: spec.AccessKey, SecretKey: spec.SecretKey, UserID: spec.UserID, Domain: spec.Domain,
		ResourcePolicy: spec.ResourcePolicy, RateLimit: spec.RateLimit, At: at,
	}}, nil
}

// Modify applies the changes: keypair.modified when the policy or the
// rate limit changes, keypair.activated or keypair.deactivated when
// is_active does.
func (k *Keypair) Modify(ch KeypairChanges, at time.Time) ([]Event, error) {
	const op = "keypair.modify"
	p := &problems{op: op}
	next := KeypairModified{ResourcePolicy: k.policy, RateLimit: k.rateLimit, At: at}
	if ch.ResourcePolicy != nil {
		p.checkName("resource_policy", *ch.ResourcePolicy)
		next.ResourcePolicy = *ch.ResourcePolicy
	}
	if ch.RateLimit != nil {
		p.checkRateLimit("rate_limit", *ch.RateLimit)
		next.RateLimit = *ch.RateLimit
	}
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	if !k.exists {
		return nil, NotFound(op, "keypair")
	}
	var events []Event
	if next.ResourcePolicy != k.policy || next.RateLimit != k.rateLimit {
		events = append(events, next)
	}
	events = append(events, activation(ch.IsActive, k.active, KeypairActivated{At: at}, KeypairDeactivated{At: at})...)
	return events, nil
}

// RotateSecret replaces the secret key; the old one is forgotten. The new
// secret must differ from the current one.
func (k *Keypair) RotateSecret(secret string, at time.Time) ([]Event, error) {
	const op = "keypair.rotate-secret"
	p := &problems{op: op}
	p.checkSecretKey("secret_key", secret)
	p.checkAt(at)
	if err := p.err(); err != nil {
		return nil, err
	}
	switch {
	case !k.exists:
		return nil, NotFound(op, "keypair")
	case secret == k.secretKey:
		return nil, Invalid(op, "secret_key", "must differ from the current secret")
	}
	return []Event{KeypairSecretRotated{SecretKey: secret, At: at}}, nil
}
