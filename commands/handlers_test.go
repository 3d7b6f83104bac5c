package commands_test

import (
	"slices"
	"testing"

	"github.com/cairnhq/cairn/commands"
)

func TestNewHandlersRefusesMissingParts(t *testing.T) {
	t.Parallel()
	if _, err := commands.NewHandlers(nil, nil, commands.Options{}); err == nil {
		t.Fatal("built handlers without a store and a clock")
	}
	if _, err := commands.NewHandlers(openStore(t), stepClock(), commands.Options{MaxAttempts: -1}); err == nil {
		t.Fatal("accepted a negative attempt count")
	}
	if _, err := commands.NewHandlers(openStore(t), stepClock(), commands.Options{EmailReservationGrace: -1}); err == nil {
		t.Fatal("accepted a negative grace")
	}
}

func TestHandlersListEveryCommandOnce(t *testing.T) {
	t.Parallel()
	h, err := commands.NewHandlers(openStore(t), stepClock(), commands.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"session.request", "session.terminate", "session.cancel-pending", "session.update-pending", "session.update-pending-batch",
		"session.schedule", "session.schedule-batch", "agent.register", "kernel.report-status", "agent.mark-lost",
		"agent.disconnect", "agent.reconnect", "agent.release-allocation", "session.force-terminate",
		"domain.create", "domain.modify", "project.create", "project.modify", "project.add-member",
		"project.remove-member", "user.create", "user.modify", "keypair.issue", "keypair.modify",
		"keypair.set-active", "keypair.rotate-secret", "user.set-main-keypair",
		"keypair-policy.create", "keypair-policy.modify", "user-policy.create", "user-policy.modify",
		"project-policy.create", "project-policy.modify", "resource-group.create", "resource-group.modify",
		"resource-group.grant", "resource-group.revoke", "image.register", "image.modify", "image.forget", "settings.change",
		"token.issue", "token.revoke", "agent.offer-enrollment", "agent.enroll", "agent.revoke-enrollment",
		"vfolder.create", "vfolder.rename", "vfolder.invite", "vfolder.invitation.accept", "vfolder.invitation.reject",
		"vfolder.invitation.cancel", "vfolder.leave", "vfolder.share", "vfolder.unshare", "vfolder.clone",
		"vfolder.finish-clone", "vfolder.trash", "vfolder.restore", "vfolder.delete-forever", "vfolder.finish-delete",
		"vfolder.purge", "vfolder.files.authorize",
	}
	if got := h.Names(); !slices.Equal(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	if h.RequestSession == nil || h.TerminateSession == nil || h.CancelPendingSession == nil || h.UpdatePendingSession == nil ||
		h.ScheduleSession == nil || h.RegisterAgent == nil || h.ReportKernelStatus == nil || h.MarkAgentLost == nil ||
		h.DisconnectAgent == nil || h.ReconnectAgent == nil || h.ReleaseAllocation == nil || h.ForceTerminateSession == nil {
		t.Fatal("a handler is missing")
	}
}
