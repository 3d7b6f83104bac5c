package commandapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/cairnhq/cairn/commands"
	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/accesslog"
	"github.com/cairnhq/cairn/infra/auth/token"
	"github.com/cairnhq/cairn/infra/httpapi"
)

const (
	opOfferEnrollment  = "agent.offer-enrollment"
	opEnrollAgent      = "agent.enroll"
	opRevokeEnrollment = "agent.revoke-enrollment"
)

// Bounds of an enrollment token's lifetime (ttl_seconds).
const (
	DefaultEnrollmentTTL = time.Hour
	MaxEnrollmentTTL     = domain.MaxEnrollmentLifetime
)

// BusSigner signs the bus credentials of enrolled agents (the bus's
// account keys stay behind it, in infra/bus/busauth).
type BusSigner interface {
	// AgentJWT signs the user JWT of agentID's own public user nkey
	// (U...), with exactly the agent's permissions. A key that is not one
	// is KindInvalid.
	AgentJWT(agentID, userKey string) (string, error)
	// BusCAPEM is the PEM of the CA the bus's TLS certificate chains to,
	// empty when the bus listens on loopback only (no TLS).
	BusCAPEM() (string, error)
	// AccountKey is the public key of the account that signs agents'
	// credentials (what an agent checks the manager's requests with).
	AccountKey() string
}

// offerEnrollmentRequest is the body of POST /v1/agents/{id}/enrollment.
type offerEnrollmentRequest struct {
	// TTL is the token's lifetime in seconds (default 1 hour, at most 7
	// days).
	TTL *int64 `json:"ttl_seconds"`
}

// offerEnrollmentResponse carries the token, shown this once.
type offerEnrollmentResponse struct {
	AgentID   string    `json:"agent_id"`
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	Position  uint64    `json:"position"`
}

// offerEnrollment handles POST /v1/agents/{id}/enrollment: a one-time
// token with which the agent enrolls its own bus key. Superadmins only.
// It replaces an unused token; the agent's current key stays valid until
// the new token is used.
func (a *api) offerEnrollment(c *fiber.Ctx) error {
	who, err := a.writing(c, opOfferEnrollment)
	if err != nil {
		return err
	}
	agentID := strings.Clone(c.Params("id"))
	var req offerEnrollmentRequest
	if len(c.Body()) > 0 {
		if err := decode(c, &req); err != nil {
			return err
		}
	}
	ttl := DefaultEnrollmentTTL
	if req.TTL != nil {
		ttl = time.Duration(*req.TTL) * time.Second
		if *req.TTL < 60 || ttl > MaxEnrollmentTTL {
			return domain.Invalid(opOfferEnrollment, "ttl_seconds", "must be between 60 and %d seconds", int64(MaxEnrollmentTTL/time.Second))
		}
	}
	secret, tok, err := token.Issue(token.Enrollment, a.Clock(), ttl)
	if err != nil {
		return err
	}
	res, err := a.Commands.OfferAgentEnrollment.Handle(c.UserContext(), metadata(c, who), commands.OfferAgentEnrollment{
		Actor: actor(who), AgentID: agentID, Digest: tok.Digest.String(), ExpiresAt: tok.ExpiresAt})
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(offerEnrollmentResponse{AgentID: agentID, Token: secret,
		ExpiresAt: tok.ExpiresAt.UTC(), Position: res.Position})
}

// revokeEnrollment handles DELETE /v1/agents/{id}/enrollment: the bus
// disconnects the agent's enrolled key and refuses it from then on, and
// an unused token stops working. Superadmins only.
func (a *api) revokeEnrollment(c *fiber.Ctx) error {
	who, err := a.writing(c, opRevokeEnrollment)
	if err != nil {
		return err
	}
	accesslog.ExpectStatus(c, http.StatusNoContent)
	if _, err := a.Commands.RevokeAgentEnrollment.Handle(c.UserContext(), metadata(c, who), commands.RevokeAgentEnrollment{
		Actor: actor(who), AgentID: strings.Clone(c.Params("id"))}); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

// enrollRequest is the body of POST /v1/agent-enrollments.
type enrollRequest struct {
	AgentID string `json:"agent_id"`
	Token   string `json:"token"`
	UserKey string `json:"user_key"`
}

// EnrollResponse is what an enrolled agent gets: its user JWT (with the
// seed it kept, its credentials), the bus's CA certificate when the bus
// uses TLS, and the account key.
type EnrollResponse struct {
	AgentID    string `json:"agent_id"`
	JWT        string `json:"jwt"`
	BusCAPEM   string `json:"bus_ca_pem"`
	AccountKey string `json:"account_key"`
}

// enrollAgent handles POST /v1/agent-enrollments: no user authentication,
// the one-time token is the credential. A wrong, expired or used token
// is one 401. The token goes no further than its digest.
func (a *api) enrollAgent(c *fiber.Ctx) error {
	if a.Bus == nil {
		return domain.Errorf(opEnrollAgent, domain.KindUnavailable, "this server does not enroll agents")
	}
	var req enrollRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	if err := domain.CheckEnrollmentAgentID(opEnrollAgent, req.AgentID); err != nil {
		return err
	}
	if req.Token == "" {
		return domain.Invalid(opEnrollAgent, "token", "required")
	}
	// Sign first: it checks the key (400 before the token is spent); a
	// JWT whose enrollment is then refused is dropped unseen.
	jwt, err := a.Bus.AgentJWT(req.AgentID, req.UserKey)
	if err != nil {
		return err
	}
	ca, err := a.Bus.BusCAPEM()
	if err != nil {
		return err
	}
	kind, digest, err := token.Parse(req.Token)
	if err != nil || kind != token.Enrollment {
		// Not even an enrollment token: the same answer as a wrong one.
		return domain.ErrEnrollmentRefused
	}
	md := commands.Metadata{Actor: "agent:" + req.AgentID, RequestID: strings.Clone(httpapi.RequestID(c)), ClientIP: c.IP(),
		Access: accessOf(c)}
	if _, err := a.Commands.EnrollAgent.Handle(c.UserContext(), md, commands.EnrollAgent{AgentID: req.AgentID,
		Digest: digest.String(), UserKey: req.UserKey}); err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(EnrollResponse{AgentID: req.AgentID, JWT: jwt, BusCAPEM: ca, AccountKey: a.Bus.AccountKey()})
}
