package commandapi

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"sort"

	"github.com/cairnhq/cairn/readapi"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/httpapi"
)

const opCreateSession = "session.request"

// createSessionRequest is the body of POST /v1/sessions. Decoding is
// strict (httpapi.DecodeJSON): an unknown field is refused by name.
type createSessionRequest struct {
	Name  string `json:"name"`
	Image string `json:"image"`
	// Type is interactive (default) or batch.
	Type string `json:"type"`
	// Resources are per kernel: slot name to amount, as a string or a
	// number ({"cpu": 2, "mem": "4g", "cuda.shares": "0.5"}).
	Resources map[string]json.RawMessage `json:"resources"`
	// Command is the startup command, required for batch sessions.
	Command       string            `json:"command"`
	Env           map[string]string `json:"env"`
	Priority      *int              `json:"priority"`
	ClusterSize   *int              `json:"cluster_size"`
	ClusterMode   string            `json:"cluster_mode"`
	Project       string            `json:"project"`
	ResourceGroup string            `json:"resource_group"`
	// Mounts name virtual folders to mount: [{name, path?, permission?}].
	Mounts []domain.VFolderMountRequest `json:"mounts"`
	// PreopenPorts are container ports to publish besides the image's
	// service ports, each an HTTP app named port-<n>.
	PreopenPorts []int `json:"preopen_ports"`
}

// createSessionResponse is the answer of POST /v1/sessions (201).
type createSessionResponse struct {
	ID        uuid.UUID            `json:"id"`
	Status    domain.SessionStatus `json:"status"`
	Position  uint64               `json:"position"`
	KernelIDs []uuid.UUID          `json:"kernel_ids"`
}

// createSession handles POST /v1/sessions: it decodes and checks the
// request, then runs RequestSession. The owner and domain are the
// caller's; the session starts PENDING.
func (a *api) createSession(c *fiber.Ctx) error {
	who, err := readapi.CallerOf(c)
	if err != nil {
		return err
	}
	if err := mayWrite(who, opCreateSession); err != nil {
		return err
	}
	if err := a.WaitForPosition(c, opCreateSession); err != nil {
		return err
	}
	spec, mounts, err := parseCreateSession(c.Body(), func(ref string) (bool, error) { return a.imageKnown(c, ref) })
	if err != nil {
		return err
	}
	spec.Owner = domain.Owner{UserID: who.UserID, AccessKey: who.AccessKey}
	spec.Domain = who.Domain
	if err := a.checkSessionScope(c, who, &spec); err != nil {
		return err
	}
	res, err := a.Commands.RequestSession.Handle(c.UserContext(), metadata(c, who),
		commands.RequestSession{Spec: spec, Actor: actor(who), Mounts: mounts})
	if err != nil {
		return err
	}
	c.Location("/v1/sessions/" + res.SessionID.String())
	return c.Status(http.StatusCreated).JSON(createSessionResponse{
		ID:        res.SessionID,
		Status:    domain.StatusPending,
		Position:  res.Position,
		KernelIDs: nonNil(res.KernelIDs),
	})
}

// parseCreateSession turns a request body into a session spec (without
// owner and domain). Every problem it finds is reported at once, each a
// KindInvalid error naming its field ("resources.<slot>" for a slot);
// checkSessionScope checks the project and resource group, and the domain
// the rest when the command runs. known tells whether an image is
// registered.
func parseCreateSession(body []byte, known func(ref string) (bool, error)) (domain.SessionSpec, []domain.VFolderMountRequest, error) {
	var req createSessionRequest
	if err := httpapi.DecodeJSON(body, &req); err != nil {
		// An unknown key that is the empty string comes back without a
		// field name; the client still deserves one.
		var de *domain.Error
		if errors.As(err, &de) && de.Kind == domain.KindInvalid && de.Field == "" {
			return domain.SessionSpec{}, nil, domain.Invalid(opCreateSession, "body", "%s (an empty key)", de.Message)
		}
		return domain.SessionSpec{}, nil, err
	}
	var errs []error
	slots, slotErrs := parseResources(req.Resources)
	errs = append(errs, slotErrs...)
	if req.Image != "" {
		ok, err := known(req.Image)
		switch {
		case err != nil:
			return domain.SessionSpec{}, nil, err
		case !ok:
			errs = append(errs, domain.Invalid(opCreateSession, "image", "image %q is not registered", req.Image))
		}
	}
	size := 1
	if req.ClusterSize != nil {
		size = *req.ClusterSize
		if size < 1 {
			errs = append(errs, domain.Invalid(opCreateSession, "cluster_size", "must be at least 1, not %d", size))
		}
	}
	if len(errs) > 0 {
		return domain.SessionSpec{}, nil, errors.Join(errs...)
	}
	typ := domain.SessionType(req.Type)
	if typ == "" {
		typ = domain.SessionInteractive
	}
	name := req.Name
	if name == "" {
		name = generatedName()
	}
	return domain.SessionSpec{
		Name:          name,
		Project:       orDefault(req.Project),
		ResourceGroup: req.ResourceGroup,
		Type:          typ,
		Image:         req.Image,
		Command:       req.Command,
		Env:           req.Env,
		Priority:      req.Priority,
		ClusterMode:   domain.ClusterMode(req.ClusterMode),
		ClusterSize:   size,
		Resources:     slots,
		PreopenPorts:  req.PreopenPorts,
	}, req.Mounts, nil
}

// parseResources parses every slot amount (domain.ParseSlots), reporting
// each bad slot as "resources.<slot>".
func parseResources(raw map[string]json.RawMessage) (domain.Slots, []error) {
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	sort.Strings(names)
	slots := make(domain.Slots, len(raw))
	var errs []error
	for _, name := range names {
		one, err := domain.ParseSlots(map[string]json.RawMessage{name: raw[name]})
		if err != nil {
			msg := err.Error()
			var de *domain.Error
			if errors.As(err, &de) {
				msg = de.Message
			}
			errs = append(errs, domain.Invalid(opCreateSession, "resources."+name, "%s", msg))
			continue
		}
		for k, v := range one {
			slots[k] = v
		}
	}
	return slots, errs
}

func orDefault(s string) string {
	if s == "" {
		return defaultScope
	}
	return s
}

// generatedName names a session whose request did not: "session-" and
// eight random hex digits.
func generatedName() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "session-" + hex.EncodeToString(b[:])
}
