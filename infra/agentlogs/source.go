package agentlogs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/agents/runtime"
	"github.com/cairnhq/cairn/domain"
)

const op = "agent.logs"

// DefaultTimeout bounds one request to a remote agent.
const DefaultTimeout = 10 * time.Second

// LocalAgent is an agent running in this process; *node.Agent satisfies
// it.
type LocalAgent interface {
	Logs(ctx context.Context, kernelID uuid.UUID, opts runtime.LogOptions) ([]byte, error)
	StreamLogs(ctx context.Context, kernelID uuid.UUID, r runtime.LogRange, w io.Writer) (runtime.LogRead, error)
}

// Addresses tells the base URL of a remote agent's HTTP endpoint;
// *AddressBook satisfies it.
type Addresses interface {
	// Address returns the agent's base URL, ok false when it is not known.
	Address(agentID string) (addr string, ok bool)
}

// Source fetches kernels' logs from their agents. Build it with NewSource.
// It is safe for concurrent use.
type Source struct {
	local     map[string]LocalAgent
	addresses Addresses
	client    *http.Client
	// streams is client without its overall timeout: a follow lasts as
	// long as its kernel.
	streams *http.Client
	sign    Signer
}

// Signer signs a request to an agent's endpoint as the manager
// (busauth.Keys.SignAgentRequest): agents answer no one else.
type Signer func(req *http.Request, agentID string) error

// NewSource returns a source that asks the agents in local (by agent id)
// directly and the others at the address addresses tells (nil: remote
// agents are never asked), signing each request with sign (nil: requests
// go unsigned, and agents refuse them). A nil client means one with
// DefaultTimeout.
func NewSource(local map[string]LocalAgent, addresses Addresses, client *http.Client, sign Signer) *Source {
	if client == nil {
		client = &http.Client{Timeout: DefaultTimeout}
	}
	l := make(map[string]LocalAgent, len(local))
	for id, a := range local {
		l[id] = a
	}
	streams := *client
	streams.Timeout = 0
	return &Source{local: l, addresses: addresses, client: client, streams: &streams, sign: sign}
}

// KernelLogs returns the last tail lines (0: all, capped at
// runtime.DefaultLogMaxBytes) of a kernel's output. Errors are domain
// errors: KindInvalid for a bad kernel id or tail, KindNotFound when the
// agent has no logs of the kernel, KindUnavailable when the agent cannot
// be asked (not running, no known address, not answering).
func (s *Source) KernelLogs(ctx context.Context, agentID, kernelID string, tail int) ([]byte, error) {
	id, err := uuid.Parse(kernelID)
	if err != nil {
		return nil, domain.Invalid(op, "kernel_id", "%q is not a kernel id", kernelID)
	}
	if tail < 0 {
		return nil, domain.Invalid(op, "tail", "must not be negative, not %d", tail)
	}
	if agentID == "" {
		return nil, domain.Errorf(op, domain.KindUnavailable, "kernel %s is not placed on an agent (yet): it has no logs", kernelID)
	}
	if a, ok := s.local[agentID]; ok {
		return a.Logs(ctx, id, runtime.LogOptions{Tail: tail})
	}
	addr, err := s.address(agentID)
	if err != nil {
		return nil, err
	}
	return s.fetch(ctx, agentID, addr, id, tail)
}

// address is the base URL of a remote agent's endpoint.
func (s *Source) address(agentID string) (string, error) {
	var addr string
	if s.addresses != nil {
		addr, _ = s.addresses.Address(agentID)
	}
	if addr == "" {
		return "", domain.Errorf(op, domain.KindUnavailable,
			"agent %s announced no logs endpoint: start it with --listen (and --advertise if the manager cannot reach its host name), then read the logs again", agentID)
	}
	return addr, nil
}

// maxBody bounds what is read of a remote answer: the agent caps the logs
// at runtime.DefaultLogMaxBytes; a little more leaves room for nothing
// else.
const maxBody = runtime.DefaultLogMaxBytes + 64<<10

// fetch asks a remote agent.
func (s *Source) fetch(ctx context.Context, agentID, addr string, kernelID uuid.UUID, tail int) ([]byte, error) {
	u := strings.TrimRight(addr, "/") + "/kernels/" + kernelID.String() + "/logs"
	if tail > 0 {
		u += "?" + url.Values{"tail": {strconv.Itoa(tail)}}.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &domain.Error{Op: op, Kind: domain.KindInternal, Err: fmt.Errorf("agent %s address %q: %w", agentID, addr, err)}
	}
	if s.sign != nil {
		if err := s.sign(req, agentID); err != nil {
			return nil, &domain.Error{Op: op, Kind: domain.KindInternal, Err: err}
		}
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, &domain.Error{Op: op, Kind: domain.KindUnavailable, Message: fmt.Sprintf("agent %s at %s does not answer", agentID, addr), Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, &domain.Error{Op: op, Kind: domain.KindUnavailable, Message: fmt.Sprintf("agent %s at %s: reading the logs", agentID, addr), Err: err}
	}
	if resp.StatusCode == http.StatusOK {
		return body, nil
	}
	return nil, remoteError(agentID, resp.StatusCode, body)
}

// remoteError turns an agent's error answer (RFC 9457 problem details)
// into a domain error of the kind its status means.
func remoteError(agentID string, status int, body []byte) error {
	var p struct {
		Detail string `json:"detail"`
		Field  string `json:"field"`
	}
	detail := http.StatusText(status)
	if err := json.Unmarshal(body, &p); err == nil && p.Detail != "" {
		detail = p.Detail
	}
	e := &domain.Error{Op: op, Field: p.Field, Message: fmt.Sprintf("agent %s answered %d: %s", agentID, status, detail)}
	switch status {
	case http.StatusBadRequest:
		e.Kind = domain.KindInvalid
	case http.StatusNotFound:
		e.Kind = domain.KindNotFound
	default:
		// Whatever else went wrong there, this request may succeed later.
		e.Kind = domain.KindUnavailable
	}
	return e
}
