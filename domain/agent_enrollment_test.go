package domain

import (
	"errors"
	"testing"
)

const (
	userKeyA = "UBPIDXD2W3GUVR2JKHYTB3VMASR3SYINR6QGR5AN7WHZ7MFPMFOULPXO"
	userKeyB = "UAAUHARLVOC5TZPYWKE2KK56V672S4GZT66H6I4PFNLJWRJMTTM3J56Y"
	digestB  = "d4735e3a265e16eee03f59718b9b5d03019c07d8b6c51f90da3a666eec13ab35"
)

func offered(digest string, expires int) AgentEnrollmentOffered {
	return AgentEnrollmentOffered{AgentID: "gpu-1", Digest: digest, ExpiresAt: at(expires), OfferedBy: "admin", At: at(0)}
}

func enrollment(t *testing.T, given ...Event) *AgentEnrollment {
	t.Helper()
	e, err := RehydrateAgentEnrollment(recorded(given))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Given an enrollment's events, when the agent enrolls, then these events
// or this error.
func TestAgentEnrollmentEnroll(t *testing.T) {
	t.Parallel()
	enrolledA := AgentEnrolled{UserKey: userKeyA, Digest: digestA, At: at(10)}
	for name, tc := range map[string]struct {
		given   []Event
		digest  string
		key     string
		at      int
		want    []Event
		wantErr error
	}{
		"first enrollment": {given: []Event{offered(digestA, 60)}, digest: digestA, key: userKeyA, at: 10,
			want: []Event{enrolledA}},
		"no offer":      {digest: digestA, key: userKeyA, at: 10, wantErr: ErrEnrollmentRefused},
		"wrong token":   {given: []Event{offered(digestA, 60)}, digest: digestB, key: userKeyA, at: 10, wantErr: ErrEnrollmentRefused},
		"empty token":   {given: []Event{offered(digestA, 60)}, digest: "", key: userKeyA, at: 10, wantErr: ErrEnrollmentRefused},
		"expired":       {given: []Event{offered(digestA, 60)}, digest: digestA, key: userKeyA, at: 60, wantErr: ErrEnrollmentRefused},
		"used once":     {given: []Event{offered(digestA, 60), enrolledA}, digest: digestA, key: userKeyB, at: 11, wantErr: ErrEnrollmentRefused},
		"bad user key":  {given: []Event{offered(digestA, 60)}, digest: digestA, key: "NOTAKEY", at: 10, wantErr: ErrInvalid},
		"seed as a key": {given: []Event{offered(digestA, 60)}, digest: digestA, key: "S" + userKeyA[1:], at: 10, wantErr: ErrInvalid},
		"withdrawn offer": {given: []Event{offered(digestA, 60), AgentEnrollmentRevoked{Reason: EnrollmentRevokedByAdmin, At: at(5)}},
			digest: digestA, key: userKeyA, at: 10, wantErr: ErrEnrollmentRefused},
		"re-enrollment revokes the old key": {given: []Event{offered(digestA, 60), enrolledA, offered(digestB, 120)},
			digest: digestB, key: userKeyB, at: 20, want: []Event{
				AgentEnrollmentRevoked{UserKey: userKeyA, Reason: EnrollmentReplaced, At: at(20)},
				AgentEnrolled{UserKey: userKeyB, Digest: digestB, At: at(20)}}},
		"a revoked key cannot come back": {given: []Event{offered(digestA, 60), enrolledA, offered(digestB, 120)},
			digest: digestB, key: userKeyA, at: 20, wantErr: ErrInvalid},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := enrollment(t, tc.given...).Enroll(tc.digest, tc.key, at(tc.at))
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == nil {
				checkEvents(t, got, tc.want)
			}
		})
	}
}

// A refusal is the same error whatever the reason: no oracle.
func TestAgentEnrollmentRefusalsAreAlike(t *testing.T) {
	t.Parallel()
	e := enrollment(t, offered(digestA, 60))
	_, wrong := e.Enroll(digestB, userKeyA, at(1))
	_, expired := e.Enroll(digestA, userKeyA, at(61))
	var a, b *Error
	if !errors.As(wrong, &a) || !errors.As(expired, &b) || a.Error() != b.Error() || a.Kind != KindUnauthenticated {
		t.Fatalf("wrong token: %v; expired: %v", wrong, expired)
	}
}

func TestAgentEnrollmentOffer(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		given   []Event
		agent   string
		digest  string
		expires int
		wantErr error
	}{
		"first offer":            {agent: "gpu-1", digest: digestA, expires: 3600},
		"replaces an unused one": {given: []Event{offered(digestB, 60)}, agent: "gpu-1", digest: digestA, expires: 3600},
		"bad digest":             {agent: "gpu-1", digest: "x", expires: 3600, wantErr: ErrInvalid},
		"bad agent id":           {agent: "gpu.1", digest: digestA, expires: 3600, wantErr: ErrInvalid},
		"already expired":        {agent: "gpu-1", digest: digestA, expires: 0, wantErr: ErrInvalid},
		"longer than seven days": {agent: "gpu-1", digest: digestA, expires: int(MaxEnrollmentLifetime.Seconds()) + 1, wantErr: ErrInvalid},
		"exactly seven days":     {agent: "gpu-1", digest: digestA, expires: int(MaxEnrollmentLifetime.Seconds())},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := enrollment(t, tc.given...).Offer(tc.agent, tc.digest, at(tc.expires), "admin", at(0))
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == nil {
				checkEvents(t, got, []Event{AgentEnrollmentOffered{AgentID: tc.agent, Digest: tc.digest,
					ExpiresAt: at(tc.expires), OfferedBy: "admin", At: at(0)}})
			}
		})
	}
}

func TestAgentEnrollmentRevoke(t *testing.T) {
	t.Parallel()
	enrolledA := AgentEnrolled{UserKey: userKeyA, Digest: digestA, At: at(10)}
	for name, tc := range map[string]struct {
		given   []Event
		want    []Event
		wantErr error
	}{
		"the key in use": {given: []Event{offered(digestA, 60), enrolledA},
			want: []Event{AgentEnrollmentRevoked{UserKey: userKeyA, Reason: EnrollmentRevokedByAdmin, At: at(30)}}},
		"a pending offer": {given: []Event{offered(digestA, 60)},
			want: []Event{AgentEnrollmentRevoked{Reason: EnrollmentRevokedByAdmin, At: at(30)}}},
		"nothing": {wantErr: ErrNotFound},
		"twice": {given: []Event{offered(digestA, 60), enrolledA, AgentEnrollmentRevoked{UserKey: userKeyA, Reason: "r", At: at(20)}},
			wantErr: ErrNotFound},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := enrollment(t, tc.given...)
			got, err := e.Revoke("", at(30))
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == nil {
				checkEvents(t, got, tc.want)
			}
		})
	}
	e := enrollment(t, offered(digestA, 60), enrolledA, offered(digestB, 120),
		AgentEnrollmentRevoked{UserKey: userKeyA, Reason: EnrollmentReplaced, At: at(20)},
		AgentEnrolled{UserKey: userKeyB, Digest: digestB, At: at(20)})
	if e.UserKey() != userKeyB || len(e.RevokedKeys()) != 1 || e.RevokedKeys()[0] != userKeyA {
		t.Fatalf("key %q, revoked %v", e.UserKey(), e.RevokedKeys())
	}
}

func TestAgentEnrollmentFoldRefusesEventsBeforeAnOffer(t *testing.T) {
	t.Parallel()
	if _, err := RehydrateAgentEnrollment(recorded([]Event{AgentEnrolled{UserKey: userKeyA, Digest: digestA, At: at(1)}})); err == nil {
		t.Fatal("folded an enrollment without an offer")
	}
}
