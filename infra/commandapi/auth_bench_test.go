package commandapi_test

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/cairnhq/cairn/infra/auth/signing"
)

// BenchmarkSignedRequests measures signed GET /v1/auth/whoami over a real
// listener with keep-alive connections: signing (client), verification,
// the credential and membership lookups, and the principal, with the
// access log on. b.N requests from GOMAXPROCS×4 clients; reports req/s.
func BenchmarkSignedRequests(b *testing.B) {
	e := newEnv(b, envOptions{accessLog: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go e.app.Listener(ln) //nolint:errcheck // ends at Shutdown
	b.Cleanup(func() { _ = e.app.Shutdown() })
	url := "http://" + ln.Addr().String() + "/v1/auth/whoami"
	alice := e.users[aliceToken]
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.SetParallelism(4)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("GET", url, nil)
			if err := signing.SignHTTP(req, alice.AccessKey, alice.SecretKey, apiVersion, time.Now()); err != nil {
				b.Error(err)
				return
			}
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}
