package appbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/cairnhq/cairn/infra/appproxy"
	"github.com/cairnhq/cairn/infra/apptest"
	"github.com/cairnhq/cairn/infra/images"
)

// AppPort is the container port the echo app listens on, pre-opened.
const AppPort = 8080

// appName is the pre-opened port's app.
var appName = "port-" + strconv.Itoa(AppPort)

// App is the echo app running in a session, and the two ways to it.
type App struct {
	SessionID string
	// ProxyBase is the app's address through the proxy, without the
	// trailing slash: ProxyBase + apptest.SmallPath is the small answer.
	ProxyBase string
	// DirectBase is the published host port on the agent's loopback.
	DirectBase string
	// Cookie is the app cookie the proxy set when the ticket was used.
	Cookie *http.Cookie
}

// session is what the benchmark reads of GET /v1/sessions/{id}.
type session struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	StatusReason string `json:"status_reason"`
	Position     uint64 `json:"position"`
	Kernels      []struct {
		ServicePorts []struct {
			Name     string `json:"name"`
			HostPort int    `json:"host_port"`
		} `json:"service_ports"`
	} `json:"kernels"`
}

// Deploy builds the echo app in dir, uploads it into a folder, starts it
// in a session of the base image on the pre-opened AppPort and opens it
// through the proxy.
func Deploy(ctx context.Context, s *Server, dir string, timeout time.Duration) (*App, error) {
	bin, err := apptest.Build(ctx, dir)
	if err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	const folderName = "bench-echo-app"
	var folder struct {
		ID string `json:"id"`
	}
	if err := s.call(ctx, "POST", "/v1/vfolders", map[string]any{"name": folderName}, http.StatusCreated, &folder); err != nil {
		return nil, err
	}
	if err := s.upload(ctx, "/v1/vfolders/"+folder.ID+"/files/content?path="+apptest.BinaryName, raw); err != nil {
		return nil, err
	}
	var created session
	if err := s.call(ctx, "POST", "/v1/sessions", map[string]any{
		"image": images.BaseImage, "command": apptest.Command(folderName, AppPort),
		"resources": map[string]any{"cpu": 1, "mem": "256m"}, "preopen_ports": []int{AppPort},
		"mounts": []map[string]any{{"name": folderName, "permission": "ro"}},
	}, http.StatusCreated, &created); err != nil {
		return nil, err
	}
	running, err := s.awaitSession(ctx, created.ID, created.Position, timeout, "RUNNING")
	if err != nil {
		return nil, err
	}
	hostPort := 0
	for _, k := range running.Kernels {
		for _, p := range k.ServicePorts {
			if p.Name == appName {
				hostPort = p.HostPort
			}
		}
	}
	if hostPort == 0 {
		return nil, fmt.Errorf("session %s shows no host port for %s", created.ID, appName)
	}
	app := &App{SessionID: created.ID, DirectBase: "http://127.0.0.1:" + strconv.Itoa(hostPort),
		ProxyBase: s.ProxyURL + "/v1/sessions/" + created.ID + "/apps/" + appName}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	link, err := s.openApp(ctx, created.ID, appName)
	if err != nil {
		return nil, err
	}
	if _, err := get(ctx, browser, link); err != nil { // the ticket, traded for the cookie
		return nil, err
	}
	u, _ := url.Parse(app.ProxyBase + "/")
	for _, c := range jar.Cookies(u) {
		if c.Name == appproxy.CookieName {
			app.Cookie = c
		}
	}
	if app.Cookie == nil {
		return nil, fmt.Errorf("the proxy set no %s cookie for %s", appproxy.CookieName, link)
	}
	if err := awaitOK(ctx, browser, app.ProxyBase+apptest.SmallPath, timeout); err != nil {
		return nil, fmt.Errorf("the echo app through the proxy: %w", err)
	}
	return app, nil
}

// upload PUTs raw as a file through the file API.
func (s *Server) upload(ctx context.Context, path string, raw []byte) error {
	req, err := http.NewRequestWithContext(ctx, "PUT", s.API+path, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	res, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated {
		return fmt.Errorf("PUT %s: %d: %s", path, res.StatusCode, body)
	}
	return nil
}

// openApp asks the API for a link to a session's app (a one-use ticket).
// A refusal is told by its problem's detail.
func (s *Server) openApp(ctx context.Context, id, app string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", s.API+"/v1/sessions/"+id+"/apps/"+app, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	res, err := s.client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var o struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	}
	if err := json.NewDecoder(res.Body).Decode(&o); err != nil {
		return "", fmt.Errorf("open the app %q: %d: %w", app, res.StatusCode, err)
	}
	if res.StatusCode != http.StatusCreated || o.URL == "" {
		return "", fmt.Errorf("open the app %q: %d: %s", app, res.StatusCode, o.Detail)
	}
	return o.URL, nil
}

// awaitSession polls a session until it has status want.
func (s *Server) awaitSession(ctx context.Context, id string, position uint64, timeout time.Duration, want string) (session, error) {
	deadline := time.Now().Add(timeout)
	path := fmt.Sprintf("/v1/sessions/%s?wait_for_position=%d", id, position)
	for {
		var got session
		if err := s.call(ctx, "GET", path, nil, http.StatusOK, &got); err != nil {
			return got, err
		}
		switch got.Status {
		case want:
			return got, nil
		case "TERMINATED", "CANCELLED", "ERROR":
			return got, fmt.Errorf("session %s ended %s (%s) while waiting for %s", id, got.Status, got.StatusReason, want)
		}
		if time.Now().After(deadline) {
			return got, fmt.Errorf("session %s is %s after %s, not %s", id, got.Status, timeout, want)
		}
		if err := pause(ctx, 20*time.Millisecond); err != nil {
			return got, err
		}
	}
}

// get GETs u and reads the answer; it returns the status.
func get(ctx context.Context, c *http.Client, u string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return 0, err
	}
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	_, err = io.Copy(io.Discard, res.Body)
	return res.StatusCode, err
}

// awaitOK GETs u until it answers 200.
func awaitOK(ctx context.Context, c *http.Client, u string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		status, err := get(ctx, c, u)
		if err == nil && status == http.StatusOK {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("GET %s: no 200 within %s (last: %d %v)", u, timeout, status, err)
		}
		if err := pause(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
