package commandapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
)

const opModifyKeypairPolicy = "keypair-policy.modify"

// modifyKeypairPolicyRequest is the body of PATCH
// /v1/keypair-policies/{name}: the limits to change.
type modifyKeypairPolicyRequest struct {
	TotalResourceSlots             *domain.Slots                 `json:"total_resource_slots"`
	DefaultForUnspecified          *domain.DefaultForUnspecified `json:"default_for_unspecified"`
	MaxConcurrentSessions          *int                          `json:"max_concurrent_sessions"`
	MaxContainersPerSession        *int                          `json:"max_containers_per_session"`
	MaxPendingSessionCount         *int                          `json:"max_pending_session_count"`
	MaxPendingSessionResourceSlots *domain.Slots                 `json:"max_pending_session_resource_slots"`
	IdleTimeout                    *int64                        `json:"idle_timeout"`
	MaxSessionLifetime             *int64                        `json:"max_session_lifetime"`
	AllowedVFolderHosts            *domain.VFolderHosts          `json:"allowed_vfolder_hosts"`
}

// modifyKeypairPolicy handles PATCH /v1/keypair-policies/{name}
// (superadmins).
func (a *api) modifyKeypairPolicy(c *fiber.Ctx) error {
	who, err := a.writing(c, opModifyKeypairPolicy)
	if err != nil {
		return err
	}
	var req modifyKeypairPolicyRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	res, err := a.Commands.ModifyKeypairPolicy.Handle(c.UserContext(), metadata(c, who), commands.ModifyKeypairPolicy{Actor: actor(who),
		Name: c.Params("id"), Changes: domain.KeypairPolicyChanges{
			TotalResourceSlots: req.TotalResourceSlots, DefaultForUnspecified: req.DefaultForUnspecified,
			MaxConcurrentSessions: req.MaxConcurrentSessions, MaxContainersPerSession: req.MaxContainersPerSession,
			MaxPendingSessionCount: req.MaxPendingSessionCount, MaxPendingSessionResourceSlots: req.MaxPendingSessionResourceSlots,
			IdleTimeout: req.IdleTimeout, MaxSessionLifetime: req.MaxSessionLifetime, AllowedVFolderHosts: req.AllowedVFolderHosts,
		}})
	if err != nil {
		return err
	}
	return c.JSON(written{Position: res.Position})
}
