package appproxy

import (
	"context"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/projections/sessions"
)

// SessionLookup is the part of the sessions read model SessionRoutes
// reads; *sessions.ReadModel satisfies it.
type SessionLookup interface {
	GetSession(ctx context.Context, id uuid.UUID) (sessions.Session, error)
}

// SessionRoutes finds routes in the sessions read model: an app is a
// service port the agent published for the session's main kernel (the
// image's, or one the session pre-opened), reachable while the session
// and that kernel are RUNNING.
type SessionRoutes struct {
	Sessions SessionLookup
}

// Route implements Routes.
func (r SessionRoutes) Route(ctx context.Context, session uuid.UUID, app string) (Route, error) {
	const op = "app.route"
	s, err := r.Sessions.GetSession(ctx, session)
	if err != nil {
		return Route{}, err
	}
	if s.Status != domain.StatusRunning {
		return Route{}, domain.Errorf(op, domain.KindNotFound, "session %s is %s: its apps are closed", session, s.Status)
	}
	for _, k := range s.Kernels {
		if k.Role != domain.KernelMain {
			continue
		}
		if k.Status != domain.StatusRunning || k.AgentID == "" {
			break
		}
		if app == TerminalApp {
			return Route{KernelID: k.ID, AgentID: k.AgentID}, nil
		}
		for _, p := range k.ServicePorts {
			if p.Name == app {
				return Route{KernelID: k.ID, AgentID: k.AgentID, Port: p.ContainerPort, HostPort: p.HostPort,
					OwnsRoot: p.Protocol == domain.ServiceProtocolPreopen}, nil
			}
		}
		break
	}
	return Route{}, domain.Errorf(op, domain.KindNotFound, "session %s offers no app %q", session, app)
}
