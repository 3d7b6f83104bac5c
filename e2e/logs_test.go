package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/podmantest"
)

// chattyScript prints to stdout and stderr over about three seconds,
// then half a MiB at once, and ends with output no newline ends.
const chattyScript = `sh -c 'for i in $(seq 1 30); do echo out$i; echo err$i >&2; sleep 0.1; done; seq 1 80000; printf end'`

// TestSessionLogsFollowLocalAgent follows a session's log through `cairn
// dev` and its in-process agent.
func TestSessionLogsFollowLocalAgent(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	checkLogsFollow(startDev(t, uri))
}

// TestSessionLogsFollowRemoteAgent follows a session's log through an
// agent of its own process, over its signed logs endpoint.
func TestSessionLogsFollowRemoteAgent(t *testing.T) {
	t.Parallel()
	uri := podmantest.URL(t)
	podmantest.Image(t, uri)
	d := startDev(t, uri, "--no-agent")
	agentDir := t.TempDir()
	creds := filepath.Join(agentDir, "agent.creds")
	runCairn(t, "bus", "agent-credentials", "--data-dir", d.dataDir, "--agent-id", d.agentID, "--out", creds)
	startProc(t, "cairn-agent", "agent", "--bus", d.natsURL, "--bus-credentials", creds, "--agent-id", d.agentID,
		"--data-dir", agentDir, "--podman", uri, "--listen", "127.0.0.1:0")
	d.awaitAgent(d.agentID, "alive", func(a agentStatus) bool { return a.Status == "alive" })
	checkLogsFollow(d)
}

// checkLogsFollow runs a batch session that writes for a few seconds and
// follows its log from offset 0 from the start: the bytes followed are
// exactly the download's after the session ended, hold both streams in
// full, and a poller that starts at a middle offset and always asks from
// the offset it was given gets exactly the rest.
func checkLogsFollow(d *devServer) {
	t := d.t
	c := d.create(map[string]any{
		"type":      "batch",
		"command":   chattyScript,
		"resources": map[string]any{"cpu": 1, "mem": "64m"},
	})
	path := "/v1/sessions/" + c.ID + "/logs"

	// Not placed yet: 409 until it is.
	var resp *http.Response
	await.Until(t, waitTimeout, "the log to be followable", func() bool {
		resp = d.logsGet(fmt.Sprintf("%s?follow=true&wait_for_position=%d", path, c.Position))
		if resp.StatusCode == http.StatusConflict || resp.StatusCode == http.StatusServiceUnavailable {
			resp.Body.Close()
			return false
		}
		return true
	})
	followed, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil || resp.Header.Get("Cairn-Log-Start") != "0" {
		t.Fatalf("follow: %d %v %v %q", resp.StatusCode, err, resp.Header, followed)
	}
	s := d.awaitStatus(c.ID, c.Position, "TERMINATED")
	if s.Result != "success" {
		t.Fatalf("session ended %s", s)
	}

	resp = d.logsGet(path + "?download=true")
	download, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || err != nil || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment;") {
		t.Fatalf("download: %d %v %v", resp.StatusCode, err, resp.Header)
	}
	if !bytes.Equal(followed, download) {
		t.Fatalf("followed %d bytes, downloaded %d: not the same bytes", len(followed), len(download))
	}
	var want bytes.Buffer
	for i := 1; i <= 80000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	want.WriteString("end")
	log := string(download)
	for i := 1; i <= 30; i++ {
		for _, line := range []string{fmt.Sprintf("out%d\n", i), fmt.Sprintf("err%d\n", i)} {
			if strings.Count(log, line) != 1 {
				t.Errorf("%q appears %d times in the log", line, strings.Count(log, line))
			}
		}
	}
	if !strings.HasSuffix(log, want.String()) {
		t.Errorf("the log does not end with the %d bytes written at once", want.Len())
	}

	// A poller from the middle, 64 KiB at a time.
	var polled bytes.Buffer
	offset := int64(len(download) / 2)
	for complete := false; !complete; {
		resp := d.logsGet(fmt.Sprintf("%s?offset=%d&limit=65536", path, offset))
		chunk, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		start, _ := strconv.ParseInt(resp.Header.Get("Cairn-Log-Start"), 10, 64)
		next, nerr := strconv.ParseInt(resp.Header.Get("Cairn-Log-Offset"), 10, 64)
		if resp.StatusCode != http.StatusOK || err != nil || nerr != nil || start != offset || next != offset+int64(len(chunk)) || len(chunk) > 65536 {
			t.Fatalf("poll from %d: %d %v %v, %d bytes", offset, resp.StatusCode, err, resp.Header, len(chunk))
		}
		polled.Write(chunk)
		offset = next
		complete = resp.Header.Get("Cairn-Log-Complete") == "true"
	}
	if !bytes.Equal(polled.Bytes(), download[len(download)/2:]) {
		t.Errorf("polled from the middle %d bytes, want the download's last %d", polled.Len(), len(download)-len(download)/2)
	}
}

// logsGet sends GET path with the token.
func (d *devServer) logsGet(path string) *http.Response {
	d.t.Helper()
	req, err := http.NewRequest("GET", d.api+path, nil)
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := d.client.Do(req)
	if err != nil {
		d.t.Fatalf("GET %s: %v", path, err)
	}
	return resp
}
