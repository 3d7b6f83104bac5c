package commands

import (
	"context"

	"github.com/cairnhq/cairn/domain"
	"github.com/google/uuid"
)

// RequestSession asks for a new session (POST /sessions). The handler
// assigns the session and kernel ids.
type RequestSession struct {
	Spec domain.SessionSpec
	// Actor is who asks (the session's owner): the folders of Mounts, and
	// the actor's dot-folders, are mounted as it may mount them. A zero
	// Actor mounts nothing.
	Actor Principal
	// Mounts name the virtual folders to mount (see resolveMounts); they
	// are resolved into Spec.Mounts.
	Mounts []domain.VFolderMountRequest
}

func (RequestSession) CommandName() string { return "session.request" }

// RequestSessionResult names the new session and its kernels (main first).
type RequestSessionResult struct {
	SessionID uuid.UUID
	KernelIDs []uuid.UUID
	Position  uint64
}

type requestSessionHandler struct {
	sessions repository[*domain.Session]
	admission
	// vfolderParts resolve the session's mounts (and give ids and time).
	vfolderParts
}

// newRequestSessionHandler builds the handler over what it uses.
func newRequestSessionHandler(sessions repository[*domain.Session], admit admission, mounts vfolderParts) requestSessionHandler {
	return requestSessionHandler{sessions: sessions, admission: admit, vfolderParts: mounts}
}

// Handle validates the request (domain.RequestSession), refuses what
// quotas already rule out (see admit), and creates the session's stream.
// The ids are fresh, so the stream cannot exist and no retry is needed.
func (h requestSessionHandler) Handle(ctx context.Context, md Metadata, cmd RequestSession) (RequestSessionResult, error) {
	id := h.newID()
	size := cmd.Spec.ClusterSize
	if size == 0 {
		size = 1
	}
	var kernels []uuid.UUID
	if size >= 1 && size <= domain.MaxClusterSize {
		kernels = make([]uuid.UUID, size)
		for i := range kernels {
			kernels[i] = h.newID()
		}
	}
	spec := cmd.Spec
	mounts, err := h.resolveMounts(ctx, cmd.Actor, spec, cmd.Mounts)
	if err != nil {
		return RequestSessionResult{}, err
	}
	spec.Mounts = append(spec.Mounts, mounts...)
	events, err := domain.RequestSession(domain.SessionRequest{ID: id, KernelIDs: kernels, Spec: spec, At: h.now()})
	if err != nil {
		return RequestSessionResult{}, err
	}
	if err := h.admit(ctx, events); err != nil {
		return RequestSessionResult{}, err
	}
	pos, err := h.sessions.create(ctx, domain.SessionStream(id), md, events)
	if err != nil {
		return RequestSessionResult{}, err
	}
	return RequestSessionResult{SessionID: id, KernelIDs: kernels, Position: pos}, nil
}
