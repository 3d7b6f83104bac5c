package domain_test

import (
	"errors"
	"testing"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

var streamID = uuid.MustParse("0195a0c0-0000-7000-8000-000000000001")

// TestStreamNames: every constructor formats the name stores already hold
// (they must never change), and ParseStream gives back the same Stream.
func TestStreamNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		stream domain.Stream
		name   string
		kind   domain.StreamKind
		id     string
	}{
		{domain.SessionStream(streamID), "session-0195a0c0-0000-7000-8000-000000000001", domain.StreamSession, streamID.String()},
		{domain.AgentStream("gpu-1"), "agent-gpu-1", domain.StreamAgent, "gpu-1"},
		{domain.AgentStream("key-x"), "agent-key-x", domain.StreamAgent, "key-x"},
		{domain.AgentEnrollmentStream("a-b"), "agentkey-a-b", domain.StreamAgentEnrollment, "a-b"},
		{domain.DomainStream("default"), "domain-default", domain.StreamDomain, "default"},
		{domain.ProjectStream("default", "ml"), "project-default/ml", domain.StreamProject, "default/ml"},
		{domain.ProjectStream("policy-x", "ml"), "project-policy-x/ml", domain.StreamProject, "policy-x/ml"},
		{domain.UserStream(streamID), "user-0195a0c0-0000-7000-8000-000000000001", domain.StreamUser, streamID.String()},
		{domain.UserEmailStream(" A@B.c "), "user-email-a@b.c", domain.StreamUserEmail, "a@b.c"},
		{domain.KeypairStream("AKIAXXXX"), "keypair-AKIAXXXX", domain.StreamKeypair, "AKIAXXXX"},
		{domain.KeypairPolicyStream("default"), "keypair-policy-default", domain.StreamKeypairPolicy, "default"},
		{domain.UserPolicyStream("default"), "user-policy-default", domain.StreamUserPolicy, "default"},
		{domain.ProjectPolicyStream("default"), "project-policy-default", domain.StreamProjectPolicy, "default"},
		{domain.ResourceGroupStream("gpu-a100"), "resource-group-gpu-a100", domain.StreamResourceGroup, "gpu-a100"},
		{domain.ImageStream("docker.io/library/python:3.12", "x86_64"), "image-docker.io/library/python:3.12@x86_64", domain.StreamImage, "docker.io/library/python:3.12@x86_64"},
		{domain.TokenStream(streamID), "token-0195a0c0-0000-7000-8000-000000000001", domain.StreamToken, streamID.String()},
		{domain.VFolderStream(streamID), "vfolder-0195a0c0-0000-7000-8000-000000000001", domain.StreamVFolder, streamID.String()},
		{domain.VFolderOwner{Kind: domain.VFolderOwnedByUser, ID: streamID.String(), Domain: "default"}.Stream(),
			"vfolder-owner-user-0195a0c0-0000-7000-8000-000000000001", domain.StreamVFolderOwner, "user-" + streamID.String()},
		{domain.VFolderOwner{Kind: domain.VFolderOwnedByProject, ID: "default/ml"}.Stream(), "vfolder-owner-project-default/ml", domain.StreamVFolderOwner, "project-default/ml"},
		{domain.Stream{Kind: domain.StreamAccessLog}, domain.AccessLogStream, domain.StreamAccessLog, ""},
		{domain.Stream{Kind: domain.StreamAudit}, domain.AuditStream, domain.StreamAudit, ""},
		{domain.SettingsStream(), "settings", domain.StreamSettings, ""},
	} {
		if got := c.stream.String(); got != c.name {
			t.Errorf("%+v formats %q, want %q", c.stream, got, c.name)
		}
		got, err := domain.ParseStream(c.name)
		if err != nil {
			t.Errorf("ParseStream(%q): %v", c.name, err)
			continue
		}
		if got != c.stream || got.Kind != c.kind || got.ID != c.id {
			t.Errorf("ParseStream(%q) = %+v, want %+v", c.name, got, c.stream)
		}
		if _, err := domain.ParseStreamOf(c.kind, c.name); err != nil {
			t.Errorf("ParseStreamOf(%s, %q): %v", c.kind, c.name, err)
		}
	}
}

// TestParseStreamRefuses: names of no kind, without an id, or with an id
// their kind cannot have are KindInvalid.
func TestParseStreamRefuses(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"", "-", "session", "session-", "agent-", "agentkey-", "audit-1", "access-log-x", "sessions-1", "settings-x",
		"Session-" + streamID.String(), "session-1", "session-" + streamID.String() + " ",
		"session-" + "0195A0C0-0000-7000-8000-000000000001", "session-{" + streamID.String() + "}",
		"user-x", "token-x", "vfolder-x", "project-default", "project-/ml", "project-default/",
		"widget-1", "exact-race",
	} {
		s, err := domain.ParseStream(name)
		if !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("ParseStream(%q) = %+v, %v; want an invalid-kind error", name, s, err)
		}
	}
	if _, err := domain.ParseStreamOf(domain.StreamAgent, domain.AgentEnrollmentStream("x").String()); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("an enrollment stream parsed as an agent's: %v", err)
	}
	if _, err := domain.AgentStream("x").UUID(); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("an agent stream's id read as a UUID: %v", err)
	}
	if id, err := domain.SessionStream(streamID).UUID(); err != nil || id != streamID {
		t.Errorf("session UUID = %v, %v", id, err)
	}
}

// FuzzParseStream: whatever ParseStream accepts formats back to the same
// name, and whatever it refuses is KindInvalid.
func FuzzParseStream(f *testing.F) {
	for _, s := range []string{"session-" + streamID.String(), "agent-a", "project-d/p", "project-policy-x/y",
		"vfolder-owner-user-x", "user-email-a@b", "audit", "access-log", "keypair-policy-", "image-a@b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		s, err := domain.ParseStream(name)
		if err != nil {
			if !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("ParseStream(%q): %v is not KindInvalid", name, err)
			}
			return
		}
		if s.String() != name {
			t.Fatalf("ParseStream(%q) = %+v, which formats %q", name, s, s.String())
		}
		if again, err := domain.ParseStream(s.String()); err != nil || again != s {
			t.Fatalf("ParseStream(%q) again = %+v, %v", name, again, err)
		}
	})
}

// BenchmarkParseStream: the scheduler and the projections parse the stream
// of every event they fold.
func BenchmarkParseStream(b *testing.B) {
	names := []string{domain.SessionStream(streamID).String(), domain.AgentStream("gpu-node-17").String(), domain.AccessLogStream}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := domain.ParseStream(names[i%len(names)]); err != nil {
			b.Fatal(err)
		}
	}
}
