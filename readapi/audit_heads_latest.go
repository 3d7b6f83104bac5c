package readapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
)

// AuditHeads is the audit head signer (infra/auditheads.Signer) as the
// query side reads it: the last head it signed and published.
type AuditHeads interface {
	Latest() (audit.SignedHead, bool)
}

// latestAuditHead handles GET /v1/audit/heads/latest (who may read the
// trail, domain auditors too: it names a seq and a hash, no record's
// content): the last signed head this server published, as its sinks got it
// (the signed head's JSON). 404 when no head was signed yet, or no signing
// key is configured.
func (a *api) latestAuditHead(c *fiber.Ctx) error {
	const op = "audit.heads.latest"
	if err := MayVerifyAudit(c, op); err != nil {
		return err
	}
	if a.AuditHeads == nil {
		return domain.Errorf(op, domain.KindNotFound, "no signed head: this server signs no audit heads (no signing key is configured)")
	}
	head, ok := a.AuditHeads.Latest()
	if !ok {
		return domain.Errorf(op, domain.KindNotFound, "no signed head yet: the signer has signed none since the audit chain last moved")
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Send(head.AppendJSON(nil))
}
