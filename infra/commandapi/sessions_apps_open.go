package commandapi

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/appproxy"
	"github.com/cairnhq/cairn/readapi"
)

const opOpenApp = "session.app.open"

// AppDeps serve POST /v1/sessions/{id}/apps/{app}: Routes says whether
// the running session offers the app, Opener mints the link (a ticket the
// app proxy trades for its cookie). Without them the route answers 503.
type AppDeps struct {
	Opener *appproxy.Opener
	Routes appproxy.Routes
}

// openedApp is the answer of POST /v1/sessions/{id}/apps/{app}.
type openedApp struct {
	App string `json:"app"`
	appproxy.Opened
}

// openApp handles POST /v1/sessions/{id}/apps/{app}: the caller may use
// the session (its owner, or an admin who may see it; monitors read
// only), which must be running and offer the app ("terminal" is every
// running session's). The answer's URL opens the app through the app
// proxy once, within a minute; the request is audited about the session
// like every API call, and counts as the session's use.
func (a *api) openApp(c *fiber.Ctx) error {
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	id, err := readapi.ParseSessionID(c, opOpenApp)
	if err != nil {
		return err
	}
	app := c.Params("app")
	if app == "" || len(app) > 64 {
		return domain.Invalid(opOpenApp, "app", "name the app (a service port's name, or terminal)")
	}
	if err := mayWrite(who, opOpenApp); err != nil {
		return err
	}
	if err := a.WaitForPosition(c, opOpenApp); err != nil {
		return err
	}
	s, err := a.VisibleSession(c, who, opOpenApp, id)
	if err != nil {
		return err
	}
	if s.Status != domain.StatusRunning {
		return domain.Errorf(opOpenApp, domain.KindConflict, "session %s is %s: its apps open while it is RUNNING", id, s.Status)
	}
	if a.Apps.Opener == nil || a.Apps.Routes == nil {
		return domain.Errorf(opOpenApp, domain.KindUnavailable, "this server runs no app proxy")
	}
	if _, err := a.Apps.Routes.Route(c.UserContext(), id, app); err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return domain.Errorf(opOpenApp, domain.KindNotFound, "session %s offers no app %q", id, app)
		}
		return err
	}
	opened, err := a.Apps.Opener.Open(who.ID, id, app)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(http.StatusCreated).JSON(openedApp{App: app, Opened: opened})
}
