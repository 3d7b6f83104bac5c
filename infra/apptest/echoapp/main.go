// Command echoapp is the web app that Cairn's app-proxy soak test and
// benchmark run inside a session of the busybox base image (built static,
// CGO_ENABLED=0, by package apptest): a small answer, a 1 MiB answer and a
// WebSocket echo on one port, so the proxy's HTTP and WebSocket paths are
// measured against the same server reached directly.
//
//	GET /small  "ok\n"
//	GET /big    1 MiB (apptest.BigSize bytes) of 'x'
//	GET /ws     WebSocket: every message sent back as it came
package main

import (
	"bytes"
	"context"
	"flag"
	"log"
	"net/http"
	"strconv"
	"time"

	"github.com/coder/websocket"
)

// bigSize is apptest.BigSize (this program imports nothing of Cairn's, so
// that it builds small and static).
const bigSize = 1 << 20

func main() {
	listen := flag.String("listen", ":8080", "address to serve on")
	flag.Parse()
	big := bytes.Repeat([]byte{'x'}, bigSize)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /small", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(big)))
		_, _ = w.Write(big)
	})
	mux.HandleFunc("GET /ws", echo)
	srv := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Printf("echoapp serving on %s", *listen)
	log.Fatal(srv.ListenAndServe())
}

// echo sends every message of the WebSocket back, until the client closes
// it. Origins are not checked: the app proxy in front checks them.
func echo(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := context.Background()
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			return
		}
		if err := c.Write(ctx, typ, msg); err != nil {
			return
		}
	}
}
