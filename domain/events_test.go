package domain

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/domain/audit"
)

// TestEventWireNames pins the wire names: they are stored forever, so a
// rename is a breaking change this test makes visible.
func TestEventWireNames(t *testing.T) {
	want := []string{
		"access.batch-logged", "access.logged", "agent.allocated", "agent.enrolled", "agent.enrollment-offered", "agent.enrollment-revoked", "agent.lost", "agent.registered", "agent.rejoined", "agent.released",
		"agent.disconnected", "agent.reconnected",
		"audit.sealed",
		"audit.pruned",
		"kernel.creating", "kernel.errored", "kernel.exited", "kernel.prepared", "kernel.preparing",
		"kernel.pulling", "kernel.running", "kernel.terminated", "kernel.pull-progressed", "kernel.apps-ready",
		"session.cancelled", "session.errored", "session.pending-updated", "session.requested",
		"session.scheduled", "session.status-changed", "session.terminated", "session.terminating",
		"session.disconnected", "session.reconnected",
		"token.issued", "token.revoked",
		"vfolder.clone_finished", "vfolder.created", "vfolder.creation-abandoned", "vfolder.delete_finished", "vfolder.delete_started",
		"vfolder.invitation_accepted", "vfolder.invitation_cancelled", "vfolder.invitation_rejected",
		"vfolder.invited", "vfolder.left", "vfolder.name_claimed", "vfolder.name_released",
		"vfolder.purged", "vfolder.renamed", "vfolder.restored", "vfolder.shared", "vfolder.trashed",
		"vfolder.unshared",
		"domain.activated", "domain.created", "domain.deactivated", "domain.modified",
		"project.activated", "project.created", "project.deactivated", "project.member-added",
		"project.member-removed", "project.modified",
		"user.created", "user.creation-abandoned", "user.email-reserved", "user.main-keypair-set",
		"user.modified", "user.password-changed",
		"keypair.activated", "keypair.deactivated", "keypair.issued", "keypair.modified", "keypair.secret-rotated",
		"keypair-policy.created", "keypair-policy.modified", "user-policy.created", "user-policy.modified",
		"project-policy.created", "project-policy.modified",
		"resource-group.access-granted", "resource-group.access-revoked", "resource-group.created", "resource-group.modified",
		"image.forgotten", "image.modified", "image.registered",
		"setting.changed",
	}
	slices.Sort(want)
	if got := EventTypes(); !slices.Equal(got, want) {
		t.Fatalf("event types:\n got %v\nwant %v", got, want)
	}
}

// TestEventRegistryRoundTrip decodes one populated payload of every type
// from JSON and back.
func TestEventRegistryRoundTrip(t *testing.T) {
	events := []Event{
		batch(),
		SessionPendingUpdated{Reason: ReasonNoAvailableInstances, Details: []string{"x"}, Tries: 2, At: at(1)},
		scheduled(place(kernelA, "a1", "GPU-0")),
		SessionStatusChanged{Status: StatusRunning, Reason: ReasonKernelStarted, At: at(2)},
		SessionTerminating{Reason: ReasonUserRequested, At: at(3)},
		SessionTerminated{Reason: ReasonTaskFailed, Result: ResultFailure, ExitCode: intp(3), At: at(4)},
		SessionCancelled{Reason: ReasonPendingTimeout, At: at(5)},
		SessionErrored{Reason: ReasonAgentLost, Message: "m", At: at(6)},
		SessionDisconnected{AgentID: "a1", Reason: ReasonAgentDisconnected, At: at(7)},
		SessionReconnected{AgentID: "a1", Status: StatusRunning, Reason: ReasonAgentReconnected, At: at(8)},
		KernelPreparing{KernelID: kernelA, At: at(1)},
		KernelPulling{KernelID: kernelA, At: at(1)},
		KernelPullProgressed{KernelID: kernelA, Progress: PullProgress{LayersDone: 1, LayersTotal: 3, BytesDone: 10, BytesTotal: 300}, At: at(1)},
		KernelAppsReady{KernelID: kernelA, Apps: []AppReady{{Name: "jupyter", At: at(2)}}, At: at(2)},
		KernelPrepared{KernelID: kernelA, At: at(1)},
		KernelCreating{KernelID: kernelA, At: at(1)},
		running(kernelA, 1),
		KernelExited{KernelID: kernelA, ExitCode: 1, Reason: ReasonTaskFailed, At: at(1)},
		KernelTerminated{KernelID: kernelA, Reason: ReasonForceTerminated, At: at(1)},
		KernelErrored{KernelID: kernelA, Reason: ReasonFailedToStart, Message: "m", At: at(1)},
		registeredEvent(),
		allocated("A", shares(1, "0.25"), share("GPU-0", "0.25"), 1),
		AgentReleased{KernelID: kernelA, SessionID: sessionID, Reason: ReasonTaskFinished, At: at(1)},
		AgentLost{Reason: ReasonAgentLost, At: at(1)},
		AgentRejoined{At: at(1)},
		AgentEnrollmentOffered{AgentID: "a1", Digest: digestA, ExpiresAt: at(60), OfferedBy: "u", At: at(1)},
		AgentEnrolled{UserKey: userKeyA, Digest: digestA, At: at(2)},
		AgentEnrollmentRevoked{UserKey: userKeyA, Reason: EnrollmentRevokedByAdmin, At: at(3)},
		AgentDisconnected{Reason: ReasonAgentDisconnected, At: at(1)},
		AgentReconnected{At: at(1)},
		folderCreated(userOwner),
		VFolderRenamed{Name: "n", By: "u", At: at(1)},
		invited(invite1, "bob", VFolderReadWrite),
		VFolderInvitationAccepted{InvitationID: invite1, At: at(1)},
		VFolderInvitationRejected{InvitationID: invite1, At: at(1)},
		VFolderInvitationCancelled{InvitationID: invite1, By: "u", At: at(1)},
		VFolderLeft{UserID: "bob", By: "bob", At: at(1)},
		VFolderShared{UserID: "bob", Permission: VFolderReadOnly, By: "u", At: at(1)},
		VFolderUnshared{UserID: "bob", By: "u", At: at(1)},
		VFolderCloneFinished{Status: VFolderError, Message: "m", At: at(1)},
		VFolderTrashed{By: "u", At: at(1)},
		VFolderRestored{By: "u", At: at(1)},
		VFolderDeleteStarted{By: "u", At: at(1)},
		VFolderDeleteFinished{Status: VFolderDeleteComplete, At: at(1)},
		VFolderPurged{By: "u", At: at(1)},
		VFolderCreationAbandoned{FolderID: folderID, Name: "n", At: at(1)},
		VFolderNameClaimed{FolderID: folderID, Name: "n", At: at(1)},
		VFolderNameReleased{FolderID: folderID, Name: "n", At: at(1)},
		AccessLogged{Record: audit.Record{Time: at(1), Action: "GET /v1/sessions", Outcome: audit.Success, Status: 200}},
		AccessBatchLogged{Records: []audit.Record{{Time: at(1), Action: "GET /v1/sessions", Outcome: audit.Success, Status: 200},
			{Time: at(2), Action: "GET /v1/sessions/:id", Outcome: audit.Denied, Status: 404, EntityType: "session", EntityID: "x"}}},
		AuditSealed{Records: []SealedRecord{{Record: auditRecord(t), SourcePosition: 7}}},
		AuditPruned{Through: auditRecord(t).Head(), At: at(9)},
		SettingChanged{Key: SettingVFolderMaxUpload, Old: "1", New: "2", Actor: "u", At: at(1)},
	}
	events = append(events, tenancyEvents()...)
	seen := map[string]bool{}
	for _, e := range events {
		seen[e.EventType()] = true
	}
	for _, name := range EventTypes() {
		if !seen[name] {
			t.Errorf("no round-trip case for %s", name)
		}
	}
	checkRoundTrip(t, events)
}

func auditRecord(t *testing.T) audit.Record {
	t.Helper()
	r, err := audit.Seal(audit.Genesis, audit.Record{
		Time: at(1), UserID: "u1", AccessKey: "AKIAIOSFODNN7EXAMPLE", ActingAs: "AKOWNER", Action: "session.create",
		EntityType: "session", EntityID: sessionID.String(), ClientIP: "192.0.2.7", Outcome: audit.Denied,
		Status: 403, Duration: 1500, RequestID: "req-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAuditSealedWireFormat: the stored payload is the records with their
// chain fields; decoded, each keeps its stored bytes and still verifies.
func TestAuditSealedWireFormat(t *testing.T) {
	r := auditRecord(t)
	data, err := json.Marshal(AuditSealed{Records: []SealedRecord{{Record: r, SourcePosition: 7}}})
	if err != nil {
		t.Fatal(err)
	}
	record := `{"v":1,"seq":1,"time":"2025-03-01T12:00:01Z","user_id":"u1","access_key":"AKIAIOSFODNN7EXAMPLE",` +
		`"acting_as":"AKOWNER","action":"session.create","entity_type":"session","entity_id":"` + sessionID.String() + `",` +
		`"client_ip":"192.0.2.7","outcome":"denied","status":403,"duration_ns":1500,"request_id":"req-1",` +
		`"prev_hash":"0000000000000000000000000000000000000000000000000000000000000000","hash":"` + r.Hash.String() + `","source_position":7}`
	if want := `{"records":[` + record + `]}`; string(data) != want {
		t.Fatalf("wire format:\n got %s\nwant %s", data, want)
	}
	// Stored bytes with other spacing are kept as they are.
	stored := `{"records": [ ` + record + ` ]}`
	e, err := DecodeEvent(TypeAuditSealed, 1, []byte(stored))
	if err != nil {
		t.Fatal(err)
	}
	sealed := e.(AuditSealed).Records
	if len(sealed) != 1 || string(sealed[0].Raw) != record || sealed[0].SourcePosition != 7 {
		t.Fatalf("decoded %+v", sealed)
	}
	if _, err := audit.Verify(slices.Values([]audit.Record{sealed[0].Record})); err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeEvent(TypeAuditSealed, 1, []byte(`{"records":[{"seq":"one"}]}`)); err == nil {
		t.Fatal("a record that does not decode was accepted")
	}
}

// TestAccessRecords lists the unchained records of both access events.
func TestAccessRecords(t *testing.T) {
	one := audit.Record{Time: at(1), Action: "POST /v1/sessions", Outcome: audit.Success, Status: 201}
	two := audit.Record{Time: at(2), Action: "GET /v1/sessions", Outcome: audit.Success, Status: 200}
	for _, c := range []struct {
		ev   Event
		want []audit.Record
		ok   bool
	}{
		{AccessLogged{Record: one}, []audit.Record{one}, true},
		{AccessBatchLogged{Records: []audit.Record{one, two}}, []audit.Record{one, two}, true},
		{SessionCancelled{Reason: ReasonPendingTimeout, At: at(5)}, nil, false},
	} {
		got, ok := AccessRecords(c.ev)
		if ok != c.ok || !slices.EqualFunc(got, c.want, func(a, b audit.Record) bool { return a == b }) {
			t.Errorf("AccessRecords(%s) = %v, %v; want %v, %v", c.ev.EventType(), got, ok, c.want, c.ok)
		}
	}
}

func TestDecodeEventWireFormat(t *testing.T) {
	data := `{"kernel_id":"0195a0c0-0000-7000-8000-0000000000a1","session_id":"0195a0c0-0000-7000-8000-000000000001",` +
		`"slots":{"cpu":"1.5","mem":"1073741824","cuda.shares":"0.25"},"devices":[{"device_id":"GPU-0","amount":"0.25"}],` +
		`"at":"2025-03-01T12:00:01Z","added_by_a_newer_writer":true}`
	e, err := DecodeEvent(TypeAgentAllocated, 1, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	got := e.(AgentAllocated)
	if got.KernelID != kernelA || got.Slots[SlotCPU] != q("1.5") || got.Slots[SlotMem] != gib(1) ||
		len(got.Devices) != 1 || got.Devices[0].Amount != q("0.25") || !got.At.Equal(at(1)) {
		t.Fatalf("%+v", got)
	}
	b, _ := json.Marshal(got.Devices[0])
	if string(b) != `{"device_id":"GPU-0","amount":"0.25"}` {
		t.Fatalf("device share JSON %s", b)
	}
}

func TestDecodeEventErrors(t *testing.T) {
	cases := map[string]struct {
		typ     string
		version int
		data    string
	}{
		"unknown type":   {"session.exploded", 1, `{}`},
		"future version": {TypeSessionCancelled, 2, `{}`},
		"not JSON":       {TypeSessionCancelled, 1, `{`},
		"wrong shape":    {TypeSessionCancelled, 1, `{"reason":7}`},
		"bad slots":      {TypeAgentAllocated, 1, `{"slots":{"cpu":"-1"}}`},
		"bad amount":     {TypeAgentAllocated, 1, `{"devices":[{"device_id":"x","amount":"lots"}]}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := DecodeEvent(c.typ, c.version, []byte(c.data)); err == nil || KindOf(err) != KindInternal {
				t.Fatalf("err = %v, want an internal error", err)
			}
		})
	}
	if e, err := DecodeEvent(TypeSessionCancelled, 0, []byte(`{"reason":"x","at":"2025-03-01T12:00:00Z"}`)); err != nil ||
		!e.(SessionCancelled).At.Equal(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("version 0 reads as 1: %v %v", e, err)
	}
}

// TestFoldSkipsAnnotations: access records written with a command's
// events are not the aggregate's: every fold leaves them out, and the
// aggregate's revision counts its own events.
func TestFoldSkipsAnnotations(t *testing.T) {
	note := AccessLogged{Record: audit.Record{Time: at(1), Action: "POST /v1/sessions", Outcome: audit.Success, Status: 201}}
	s, err := RehydrateSession(recorded([]Event{batch(), note, SessionTerminating{Reason: ReasonUserRequested, At: at(2)}}))
	if err != nil {
		t.Fatal(err)
	}
	if s.Revision() != 1 || s.Status() != StatusTerminating {
		t.Fatalf("revision %d status %s", s.Revision(), s.Status())
	}
	a, err := RehydrateAgent(recorded([]Event{registeredEvent(), note}))
	if err != nil || a.Revision() != 0 {
		t.Fatalf("agent: revision %d, %v", a.Revision(), err)
	}
}

// TestPackRecords: payloads decode to the records in order, none above
// the limit unless one record alone is.
func TestPackRecords(t *testing.T) {
	var encoded [][]byte
	var records []audit.Record
	for i := range 50 {
		r := audit.Record{Time: at(i), Action: "GET /v1/sessions", Outcome: audit.Success, Status: 200, RequestID: strings.Repeat("r", i*7)}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		records, encoded = append(records, r), append(encoded, b)
	}
	// One Packer for every limit, largest first: each Pack reuses the
	// memory of the one before and must give what PackRecords gives.
	var packer audit.Packer
	for _, max := range []int{1 << 20, 1, 100, 300, 1000} {
		appendEncoded := func(b []byte, i int) []byte { return append(b, encoded[i]...) }
		payloads := audit.PackRecords(len(encoded), max, appendEncoded)
		reused := packer.Pack(len(encoded), max, appendEncoded)
		if !slices.EqualFunc(reused, payloads, bytes.Equal) {
			t.Errorf("max %d: a reused Packer laid out %d payloads unlike PackRecords' %d", max, len(reused), len(payloads))
		}
		var got []audit.Record
		for _, p := range payloads {
			if len(p) > max && bytes.Count(p, []byte(`"action"`)) > 1 {
				t.Errorf("max %d: payload of %d bytes holds several records", max, len(p))
			}
			e, err := DecodeEvent(TypeAccessBatchLogged, SchemaVersion, p)
			if err != nil {
				t.Fatalf("max %d: %v", max, err)
			}
			got = append(got, e.(AccessBatchLogged).Records...)
		}
		if !slices.EqualFunc(got, records, func(a, b audit.Record) bool { return a.Time.Equal(b.Time) && a.RequestID == b.RequestID }) {
			t.Errorf("max %d: records differ after packing into %d payloads", max, len(payloads))
		}
		if max == 1<<20 && len(payloads) != 1 {
			t.Errorf("max %d: %d payloads, want 1", max, len(payloads))
		}
	}
	if got := audit.PackRecords(0, 100, nil); len(got) != 0 {
		t.Errorf("no records packed into %d payloads", len(got))
	}
}

// TestAuditBatchDecoding: the event codec and encoding/json
// decode every batch alike, whatever its spacing or escapes, and invalid
// payloads are refused by both.
func TestAuditBatchDecoding(t *testing.T) {
	r := auditRecord(t)
	plainRec := string(AppendSealedJSON(nil, &SealedRecord{Record: r, SourcePosition: 7}))
	if want, _ := json.Marshal(SealedRecord{Record: r, SourcePosition: 7}); plainRec != string(want) {
		t.Fatalf("AppendSealedJSON:\n got %s\nwant %s", plainRec, want)
	}
	escaped := strings.Replace(plainRec, `"client_ip":"192.0.2.7"`, `"client_ip":"<\u0031>"`, 1)
	for _, c := range []struct {
		payload string
		ok      bool
	}{
		{`{"records":[]}`, true},
		{`{"records":[` + plainRec + `,` + plainRec + `]}`, true},
		{" {\"records\" :\n[ " + plainRec + " ,\t" + escaped + " ] } ", true},
		{`{"records":[` + escaped + `]}`, true},
		{`{"Records":[` + plainRec + `]}`, true},
		{`{"records":[` + plainRec + `],"other":1}`, true},
		{`{"records":[` + plainRec + `]`, false},
		{`{"records":[` + plainRec + `,]}`, false},
		{`{"records":[` + plainRec + `]}x`, false},
		{`{"records":[{"seq":"x"}]}`, false},
	} {
		got, err := DecodeEvent(TypeAuditSealed, SchemaVersion, []byte(c.payload))
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok %v", c.payload, err, c.ok)
			continue
		}
		if !c.ok {
			continue
		}
		var ref struct {
			Records []json.RawMessage
		}
		if err := json.Unmarshal([]byte(c.payload), &ref); err != nil {
			t.Fatal(err)
		}
		recs := got.(AuditSealed).Records
		if len(recs) != len(ref.Records) {
			t.Fatalf("%s: %d records, want %d", c.payload, len(recs), len(ref.Records))
		}
		for i, raw := range ref.Records {
			var want SealedRecord
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if string(recs[i].Raw) != string(raw) || !recs[i].Time.Equal(want.Time) || recs[i].ClientIP != want.ClientIP ||
				recs[i].SourcePosition != want.SourcePosition || recs[i].Hash != want.Hash {
				t.Errorf("%s: record %d = %+v, want %+v", c.payload, i, recs[i], want)
			}
		}
		// The same records as an access batch.
		batch, err := DecodeEvent(TypeAccessBatchLogged, SchemaVersion, []byte(strings.ReplaceAll(c.payload, `,"source_position":7`, "")))
		if err != nil || len(batch.(AccessBatchLogged).Records) != len(recs) {
			t.Errorf("%s as an access batch: %v", c.payload, err)
		}
	}
}
