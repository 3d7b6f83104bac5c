package readapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
)

const (
	opSessionLogs = "session.logs"
	// maxLogTail bounds ?tail= (lines).
	maxLogTail = 100_000
)

// sessionLogs handles GET /v1/sessions/{id}/logs?tail=N: the main kernel's
// stdout and stderr as text/plain, read from the agent it was placed on
// (tail 0 or absent: everything the agent keeps). A session not placed on
// an agent (yet, or ever) is a conflict (409).
func (a *api) sessionLogs(c *fiber.Ctx) error {
	who, err := CallerOf(c)
	if err != nil {
		return err
	}
	id, err := ParseSessionID(c, opSessionLogs)
	if err != nil {
		return err
	}
	tail, err := QueryInt(c, opSessionLogs, "tail", 0, 0, maxLogTail)
	if err != nil {
		return err
	}
	if err := a.WaitForPosition(c, opSessionLogs); err != nil {
		return err
	}
	s, err := a.VisibleSession(c, who, opSessionLogs, id)
	if err != nil {
		return err
	}
	k, ok := mainKernel(s)
	if !ok || k.AgentID == "" {
		return domain.Errorf(opSessionLogs, domain.KindConflict,
			"session %s is %s and has not been placed on an agent: it has no logs", id, s.Status)
	}
	logs, err := a.Logs.KernelLogs(c.UserContext(), k.AgentID, k.ID.String(), tail)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	return c.Send(logs)
}
