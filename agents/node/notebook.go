package node

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// NotebookApp is where a kernel's Jupyter server answers on the agent's
// host: URL is its base URL on the loopback host port
// (http://127.0.0.1:<host port>/v1/sessions/<session id>/apps/jupyter/),
// Token the kernel's app token, which Jupyter takes as its own.
type NotebookApp struct {
	URL   string
	Token string
}

// NotebookKernel is what Jupyter's REST API says of one of its kernels
// (GET {base_url}api/kernels).
type NotebookKernel struct {
	ID string `json:"id"`
	// ExecutionState is busy while the kernel runs code (idle, starting...
	// otherwise).
	ExecutionState string    `json:"execution_state"`
	LastActivity   time.Time `json:"last_activity"`
}

// NotebookServer lists the kernels of a Jupyter server. jupyterAPI asks
// Jupyter's REST API; tests may answer as Jupyter does.
type NotebookServer interface {
	Kernels(ctx context.Context, app NotebookApp) ([]NotebookKernel, error)
}

// jupyterAPI asks Jupyter's REST API over HTTP.
type jupyterAPI struct{ client *http.Client }

var _ NotebookServer = jupyterAPI{}

// maxNotebookAnswer bounds the kernel list read (a server with thousands
// of kernels is not one we need to read to the end).
const maxNotebookAnswer = 1 << 20

// Kernels asks GET {URL}api/kernels with the token in the Authorization
// header (never in the URL, which servers log).
func (j jupyterAPI) Kernels(ctx context.Context, app NotebookApp) ([]NotebookKernel, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, app.URL+"api/kernels", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "token "+app.Token)
	req.Header.Set("Accept", "application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxNotebookAnswer))
		return nil, fmt.Errorf("jupyter api/kernels: %s", resp.Status)
	}
	var out []NotebookKernel
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxNotebookAnswer)).Decode(&out); err != nil {
		return nil, fmt.Errorf("jupyter api/kernels: %w", err)
	}
	return out, nil
}
