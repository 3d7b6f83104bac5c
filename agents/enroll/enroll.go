// Package enroll is the agent's side of enrollment: it makes the agent's
// NATS user key on this machine (the seed never leaves it), sends the
// public part with the one-time token to the manager (POST
// /v1/agent-enrollments), and writes the agent's bus credentials
// (<data dir>/bus.creds, 0600) and the bus's CA certificate
// (<data dir>/bus-ca.pem, when the bus uses TLS) where `cairn agent`
// looks for them.
package enroll

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/infra/bus/busauth"
)

// Files in the agent's data directory.
const (
	CredentialsFile = "bus.creds"
	CAFile          = "bus-ca.pem"
	maxAnswer       = 1 << 20
)

// Config is one enrollment.
type Config struct {
	// API is the manager's HTTP API, e.g. http://manager:8080.
	API     string
	AgentID string
	// Token is the one-time token from POST /v1/agents/{id}/enrollment.
	Token   string
	DataDir string
	// Client sends the request (default http.DefaultClient).
	Client *http.Client
}

// Validate reports every missing field.
func (c Config) Validate() error {
	var errs []error
	for _, f := range []struct{ name, v string }{{"api", c.API}, {"agent id", c.AgentID}, {"token", c.Token}, {"data dir", c.DataDir}} {
		if strings.TrimSpace(f.v) == "" {
			errs = append(errs, fmt.Errorf("enroll: no %s", f.name))
		}
	}
	return errors.Join(errs...)
}

// Result says where the credentials went.
type Result struct {
	CredentialsPath string
	CAPath          string // "" when the bus has no TLS
	UserKey         string
	AccountKey      string
}

type request struct {
	AgentID string `json:"agent_id"`
	Token   string `json:"token"`
	UserKey string `json:"user_key"`
}

type answer struct {
	AgentID    string `json:"agent_id"`
	JWT        string `json:"jwt"`
	BusCAPEM   string `json:"bus_ca_pem"`
	AccountKey string `json:"account_key"`
}

// Run enrolls: a new user key, the manager's signature on it, the files.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	client := cfg.Client
	if client == nil {
		client = http.DefaultClient
	}
	user, err := nkeys.CreateUser()
	if err != nil {
		return Result{}, err
	}
	defer user.Wipe()
	pub, err := user.PublicKey()
	if err != nil {
		return Result{}, err
	}
	seed, err := user.Seed()
	if err != nil {
		return Result{}, err
	}
	ans, err := post(ctx, client, strings.TrimRight(cfg.API, "/")+"/v1/agent-enrollments", request{AgentID: cfg.AgentID, Token: cfg.Token, UserKey: pub})
	if err != nil {
		return Result{}, err
	}
	claims, err := jwt.DecodeUserClaims(ans.JWT)
	if err != nil {
		return Result{}, fmt.Errorf("enroll: the manager's JWT: %w", err)
	}
	if claims.Subject != pub {
		return Result{}, fmt.Errorf("enroll: the manager signed key %s, not ours (%s)", claims.Subject, pub)
	}
	creds, err := jwt.FormatUserConfig(ans.JWT, seed)
	if err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return Result{}, fmt.Errorf("enroll: data directory: %w", err)
	}
	res := Result{CredentialsPath: filepath.Join(cfg.DataDir, CredentialsFile), UserKey: pub, AccountKey: ans.AccountKey}
	if err := busauth.WriteSecretFile(res.CredentialsPath, creds); err != nil {
		return Result{}, err
	}
	if ans.BusCAPEM != "" {
		res.CAPath = filepath.Join(cfg.DataDir, CAFile)
		if err := os.WriteFile(res.CAPath, []byte(ans.BusCAPEM), 0o644); err != nil {
			return Result{}, fmt.Errorf("enroll: bus CA: %w", err)
		}
	}
	return res, nil
}

func post(ctx context.Context, client *http.Client, url string, body request) (answer, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return answer{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return answer{}, fmt.Errorf("enroll: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return answer{}, fmt.Errorf("enroll: %w", err)
	}
	if resp.StatusCode != http.StatusCreated {
		return answer{}, &domain.Error{Op: "agent.enroll", Kind: kindOf(resp.StatusCode),
			Message: fmt.Sprintf("the manager answered %d: %s", resp.StatusCode, bytes.TrimSpace(b))}
	}
	var a answer
	if err := json.Unmarshal(b, &a); err != nil {
		return answer{}, fmt.Errorf("enroll: the manager's answer: %w", err)
	}
	return a, nil
}

// kindOf is the error kind of a refusal's status.
func kindOf(status int) domain.Kind {
	switch status {
	case http.StatusUnauthorized:
		return domain.KindUnauthenticated
	case http.StatusBadRequest:
		return domain.KindInvalid
	case http.StatusForbidden:
		return domain.KindForbidden
	}
	return domain.KindUnavailable
}
