package domain

import (
	"testing"

	"github.com/google/uuid"
)

func userSpec() UserSpec {
	return UserSpec{ID: userA, Email: "Alice@Example.com", Username: "alice", Domain: "acme", PasswordHash: "$argon2id$v=19$x", ResourcePolicy: "default"}
}

func TestUserCreate(t *testing.T) {
	create := func(s UserSpec) func(*User) ([]Event, error) {
		return func(u *User) ([]Event, error) { return u.Create(s, at(0)) }
	}
	noUsername := userSpec()
	noUsername.Username, noUsername.Role, noUsername.Status = "", RoleMonitor, UserBeforeVerification
	runCases(t, RehydrateUser, []aggCase[*User]{
		{
			name: "defaults: role user, status active",
			when: create(userSpec()),
			then: []Event{userCreated()},
			check: func(t *testing.T, u *User) {
				if u.ID() != userA || u.Email() != "Alice@Example.com" || u.Role() != RoleUser || u.Status() != UserActive ||
					u.PasswordHash() == "" || u.Domain() != "acme" || u.MainAccessKey() != "" || u.RequireLive("x") != nil {
					t.Fatalf("%+v", u)
				}
			},
		},
		{
			name: "the username defaults to the e-mail address",
			when: create(noUsername),
			then: []Event{UserCreated{UserID: userA, Email: "Alice@Example.com", Username: "Alice@Example.com", Domain: "acme",
				Role: RoleMonitor, Status: UserBeforeVerification, PasswordHash: "$argon2id$v=19$x", ResourcePolicy: "default", At: at(0)}},
		},
		{
			name: "every problem at once",
			when: create(UserSpec{Email: "not-an-address", Username: "a b", Domain: "", Role: "root", Status: UserDeleted, ResourcePolicy: "x y"}),
			err:  ErrInvalid, fields: []string{"id", "email", "username", "domain", "role", "status", "password_hash", "resource_policy"},
		},
		{name: "e-mail without a host dot", when: create(func() UserSpec { s := userSpec(); s.Email = "a@b"; return s }()), err: ErrInvalid, fields: []string{"email"}},
		{name: "localhost e-mail", when: create(func() UserSpec { s := userSpec(); s.Email = "admin@localhost"; return s }()),
			then: []Event{func() UserCreated { e := userCreated(); e.Email = "admin@localhost"; return e }()}},
		{name: "the user exists", given: []Event{userCreated()}, when: create(userSpec()), err: ErrConflict},
		{name: "the stream was abandoned", given: []Event{UserCreationAbandoned{UserID: userA, Email: "a@b.c", At: at(0)}}, when: create(userSpec()), err: ErrConflict},
	})
}

func TestUserModify(t *testing.T) {
	modify := func(ch UserChanges) func(*User) ([]Event, error) {
		return func(u *User) ([]Event, error) { return u.Modify(ch, at(5)) }
	}
	base := userCreated()
	deleted := UserModified{Username: "alice", Role: RoleUser, Status: UserDeleted, ResourcePolicy: "default", At: at(1)}
	runCases(t, RehydrateUser, []aggCase[*User]{
		{
			name:  "role and password",
			given: []Event{base},
			when:  modify(UserChanges{Role: ptr(RoleAdmin), PasswordHash: ptr("new-hash")}),
			then: []Event{UserModified{Username: "alice", Role: RoleAdmin, Status: UserActive, ResourcePolicy: "default", At: at(5)},
				UserPasswordChanged{PasswordHash: "new-hash", At: at(5)}},
			check: func(t *testing.T, u *User) {
				if u.Role() != RoleAdmin || u.PasswordHash() != "new-hash" || !u.ModifiedAt().Equal(at(5)) {
					t.Fatalf("%+v", u)
				}
			},
		},
		{name: "the same values change nothing", given: []Event{base},
			when: modify(UserChanges{Role: ptr(RoleUser), Status: ptr(UserActive), PasswordHash: ptr(base.PasswordHash), Username: ptr("alice")})},
		{name: "deleting", given: []Event{base}, when: modify(UserChanges{Status: ptr(UserDeleted)}),
			then: []Event{UserModified{Username: "alice", Role: RoleUser, Status: UserDeleted, ResourcePolicy: "default", At: at(5)}},
			check: func(t *testing.T, u *User) {
				if !errorIs(u.RequireLive("x"), ErrConflict) {
					t.Fatal("a deleted user is live")
				}
			}},
		{name: "a deleted user stays deleted", given: []Event{base, deleted}, when: modify(UserChanges{Status: ptr(UserActive)}), err: ErrConflict},
		{name: "unknown user", when: modify(UserChanges{Status: ptr(UserActive)}), err: ErrNotFound},
		{name: "bad values", given: []Event{base}, when: modify(UserChanges{Role: ptr(Role("god")), Status: ptr(UserStatus("asleep")), PasswordHash: ptr("")}),
			err: ErrInvalid, fields: []string{"role", "status", "password_hash"}},
		{
			name:  "main keypair",
			given: []Event{base},
			when:  func(u *User) ([]Event, error) { return u.SetMainKeypair(accessKeyA, at(5)) },
			then:  []Event{UserMainKeypairSet{AccessKey: accessKeyA, At: at(5)}},
			check: func(t *testing.T, u *User) {
				if u.MainAccessKey() != accessKeyA {
					t.Fatal(u.MainAccessKey())
				}
			},
		},
		{name: "main keypair again", given: []Event{base, UserMainKeypairSet{AccessKey: accessKeyA, At: at(1)}},
			when: func(u *User) ([]Event, error) { return u.SetMainKeypair(accessKeyA, at(5)) }},
		{name: "main keypair of a deleted user", given: []Event{base, deleted},
			when: func(u *User) ([]Event, error) { return u.SetMainKeypair(accessKeyA, at(5)) }, err: ErrConflict},
		{name: "main keypair malformed", given: []Event{base},
			when: func(u *User) ([]Event, error) { return u.SetMainKeypair("AKshort", at(5)) }, err: ErrInvalid, fields: []string{"access_key"}},
	})
}

func TestUserAbandon(t *testing.T) {
	abandon := func(u *User) ([]Event, error) { return u.Abandon(userA, "a@b.c", at(3)) }
	runCases(t, RehydrateUser, []aggCase[*User]{
		{name: "a stream without a user is closed", when: abandon, then: []Event{UserCreationAbandoned{UserID: userA, Email: "a@b.c", At: at(3)}},
			check: func(t *testing.T, u *User) {
				if !u.Abandoned() || u.Exists() || !errorIs(u.RequireLive("x"), ErrNotFound) {
					t.Fatalf("%+v", u)
				}
			}},
		{name: "closing again", given: []Event{UserCreationAbandoned{UserID: userA, Email: "a@b.c", At: at(1)}}, when: abandon},
		{name: "a created user cannot be abandoned", given: []Event{userCreated()}, when: abandon, err: ErrConflict},
	})
}

func TestEmailReservation(t *testing.T) {
	reserved := UserEmailReserved{Email: "a@b.c", UserID: userA, RequestID: "req-1", At: at(0)}
	runCases(t, RehydrateEmailReservation, []aggCase[*EmailReservation]{
		{
			name: "a free address",
			when: func(r *EmailReservation) ([]Event, error) { return r.Reserve("a@b.c", userA, "req-1", at(0)) },
			then: []Event{reserved},
			check: func(t *testing.T, r *EmailReservation) {
				if r.UserID() != userA || r.RequestID() != "req-1" || r.Email() != "a@b.c" || !r.ReservedAt().Equal(at(0)) {
					t.Fatalf("%+v", r)
				}
			},
		},
		{name: "reserved for the same user", given: []Event{reserved},
			when: func(r *EmailReservation) ([]Event, error) { return r.Reserve("a@b.c", userA, "req-2", at(1)) }},
		{name: "reserved for another user", given: []Event{reserved},
			when: func(r *EmailReservation) ([]Event, error) { return r.Reserve("a@b.c", userB, "req-2", at(1)) }, err: ErrConflict},
		{name: "taking over", given: []Event{reserved},
			when: func(r *EmailReservation) ([]Event, error) { return r.TakeOver(userA, "a@b.c", userB, "req-2", at(1)) },
			then: []Event{UserEmailReserved{Email: "a@b.c", UserID: userB, RequestID: "req-2", At: at(1)}}},
		{name: "taking over from the wrong user", given: []Event{reserved},
			when: func(r *EmailReservation) ([]Event, error) {
				return r.TakeOver(userB, "a@b.c", uuid.New(), "req-2", at(1))
			}, err: ErrConflict},
		{name: "taking over nothing",
			when: func(r *EmailReservation) ([]Event, error) { return r.TakeOver(userB, "a@b.c", userA, "req-2", at(1)) }, err: ErrConflict},
		{name: "bad input", when: func(r *EmailReservation) ([]Event, error) { return r.Reserve("nope", uuid.Nil, "", at(1)) },
			err: ErrInvalid, fields: []string{"email", "user_id"}},
	})
	if EmailKey("  Alice@Example.COM ") != "alice@example.com" {
		t.Fatal("EmailKey")
	}
}

func TestKeypair(t *testing.T) {
	spec := KeypairSpec{AccessKey: accessKeyA, SecretKey: secretA, UserID: userA, Domain: "acme", ResourcePolicy: "default", RateLimit: 1000}
	base := keypairIssued()
	runCases(t, RehydrateKeypair, []aggCase[*Keypair]{
		{
			name: "issued active",
			when: func(k *Keypair) ([]Event, error) { return k.Issue(spec, at(0)) },
			then: []Event{base},
			check: func(t *testing.T, k *Keypair) {
				if !k.IsActive() || k.AccessKey() != accessKeyA || k.SecretKey() != secretA || k.UserID() != userA || k.Domain() != "acme" || k.RateLimit() != 1000 {
					t.Fatalf("%+v", k)
				}
			},
		},
		{name: "the access key is taken", given: []Event{base}, when: func(k *Keypair) ([]Event, error) { return k.Issue(spec, at(0)) }, err: ErrConflict},
		{
			name: "malformed",
			when: func(k *Keypair) ([]Event, error) {
				return k.Issue(KeypairSpec{AccessKey: "AKiaaaaaaaaaaaaaaaaa", SecretKey: "short", RateLimit: -1}, at(0))
			},
			err: ErrInvalid, fields: []string{"access_key", "secret_key", "user_id", "domain", "resource_policy", "rate_limit"},
		},
		{
			name:  "deactivated with a new policy",
			given: []Event{base},
			when: func(k *Keypair) ([]Event, error) {
				return k.Modify(KeypairChanges{ResourcePolicy: ptr("big"), IsActive: ptr(false)}, at(4))
			},
			then: []Event{KeypairModified{ResourcePolicy: "big", RateLimit: 1000, At: at(4)}, KeypairDeactivated{At: at(4)}},
			check: func(t *testing.T, k *Keypair) {
				if k.IsActive() || k.ResourcePolicy() != "big" {
					t.Fatalf("%+v", k)
				}
			},
		},
		{name: "reactivated", given: []Event{base, KeypairDeactivated{At: at(1)}},
			when: func(k *Keypair) ([]Event, error) {
				return k.Modify(KeypairChanges{IsActive: ptr(true), RateLimit: ptr(1000)}, at(4))
			},
			then: []Event{KeypairActivated{At: at(4)}}},
		{name: "modify unknown", when: func(k *Keypair) ([]Event, error) { return k.Modify(KeypairChanges{}, at(4)) }, err: ErrNotFound},
		{
			name:  "rotating the secret forgets the old one",
			given: []Event{base},
			when:  func(k *Keypair) ([]Event, error) { return k.RotateSecret(secretB, at(6)) },
			then:  []Event{KeypairSecretRotated{SecretKey: secretB, At: at(6)}},
			check: func(t *testing.T, k *Keypair) {
				if k.SecretKey() != secretB || !k.SecretRotatedAt().Equal(at(6)) {
					t.Fatalf("%+v", k)
				}
			},
		},
		{name: "rotating to the same secret", given: []Event{base}, when: func(k *Keypair) ([]Event, error) { return k.RotateSecret(secretA, at(6)) }, err: ErrInvalid},
		{name: "rotating a malformed secret", given: []Event{base}, when: func(k *Keypair) ([]Event, error) { return k.RotateSecret("x", at(6)) }, err: ErrInvalid, fields: []string{"secret_key"}},
		{name: "rotating unknown", when: func(k *Keypair) ([]Event, error) { return k.RotateSecret(secretB, at(6)) }, err: ErrNotFound},
	})
}

func TestAccessKeyFormat(t *testing.T) {
	for s, want := range map[string]bool{
		accessKeyA:              true,
		"AKCAIRN0123456789ABCD": false, // 21
		"AKCAIRN0123456789ABC":  true,
		"BKCAIRN0123456789ABC":  false,
		"AKcairn0123456789ABC":  false,
		"":                      false,
	} {
		if IsAccessKey(s) != want {
			t.Errorf("IsAccessKey(%q) = %v", s, !want)
		}
	}
}
