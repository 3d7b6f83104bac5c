package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// CallJSON is the client side of the API for tools (benchmarks): it sends
// body (when not nil) as JSON with the bearer token, and decodes the JSON
// answer into out (when not nil). want is the expected status; 0 accepts
// any 2xx. Another status is an error carrying the answer's body.
func CallJSON(ctx context.Context, client *http.Client, method, url, token string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if (want == 0 && resp.StatusCode/100 != 2) || (want != 0 && resp.StatusCode != want) {
		return fmt.Errorf("%s %s: %d: %s", method, url, resp.StatusCode, bytes.TrimSpace(raw))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}
