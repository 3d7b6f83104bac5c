package apptest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
)

// JupyterExecute runs code in a Jupyter kernel over its channels
// WebSocket at url (…/api/kernels/{id}/channels), dialled with opts
// (the token header, or a cookie jar through the app proxy), and returns
// what the code printed on stdout; an error the code raised is an error.
func JupyterExecute(ctx context.Context, url string, opts *websocket.DialOptions, code string) (string, error) {
	session, msgID := randomHex(), randomHex()
	conn, _, err := websocket.Dial(ctx, url+"?session_id="+session, opts)
	if err != nil {
		return "", fmt.Errorf("dial %s: %w", url, err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 22)
	type header struct {
		MsgID    string `json:"msg_id"`
		MsgType  string `json:"msg_type"`
		Session  string `json:"session"`
		Username string `json:"username"`
		Version  string `json:"version"`
		Date     string `json:"date"`
	}
	request := map[string]any{
		"header": header{MsgID: msgID, MsgType: "execute_request", Session: session, Username: "cairn-test", Version: "5.3",
			Date: time.Now().UTC().Format(time.RFC3339Nano)},
		"parent_header": map[string]any{}, "metadata": map[string]any{}, "channel": "shell", "buffers": []any{},
		"content": map[string]any{"code": code, "silent": false, "store_history": false, "user_expressions": map[string]any{},
			"allow_stdin": false, "stop_on_error": true},
	}
	if err := wsjson.Write(ctx, conn, request); err != nil {
		return "", fmt.Errorf("send execute_request: %w", err)
	}
	var out strings.Builder
	for {
		var msg struct {
			Header       header `json:"header"`
			ParentHeader header `json:"parent_header"`
			Content      struct {
				Name           string `json:"name"`
				Text           string `json:"text"`
				ExecutionState string `json:"execution_state"`
				Ename          string `json:"ename"`
				Evalue         string `json:"evalue"`
			} `json:"content"`
		}
		if err := wsjson.Read(ctx, conn, &msg); err != nil {
			return out.String(), fmt.Errorf("read (stdout so far %q): %w", out.String(), err)
		}
		if msg.ParentHeader.MsgID != msgID {
			continue
		}
		switch {
		case msg.Header.MsgType == "stream" && msg.Content.Name == "stdout":
			out.WriteString(msg.Content.Text)
		case msg.Header.MsgType == "error":
			return out.String(), fmt.Errorf("%s: %s: %s", code, msg.Content.Ename, msg.Content.Evalue)
		case msg.Header.MsgType == "status" && msg.Content.ExecutionState == "idle":
			return out.String(), nil
		}
	}
}

func randomHex() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
