package commandapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"
)

// Resumable upload: the file sent as tus chunks of 8 MiB (each PATCH
// fsynced before its answer, each checked with sha256) vs one PUT of the
// same file, in the same iterations ("x-put": the PUT's time over tus's;
// the price of resumability).
//
//	go test -run '^$' -bench TusUpload -benchtime 5x ./infra/commandapi/
func BenchmarkVFolderTusUpload(b *testing.B) {
	e := newEnv(b, envOptions{anyUploadSize: true})
	api := serve(b, e)
	folder := benchFolder(b, e, api)
	size := benchMiB(b)
	data, err := os.ReadFile(source(b, size))
	if err != nil {
		b.Fatal(err)
	}
	const chunk = 8 << 20
	sums := map[int]string{}
	for off := 0; off < len(data); off += chunk {
		s := sha256.Sum256(data[off:min(off+chunk, len(data))])
		sums[off] = "sha256 " + base64.StdEncoding.EncodeToString(s[:])
	}
	var tusT, putT time.Duration
	b.SetBytes(size)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		req, _ := http.NewRequestWithContext(context.Background(), "POST", folder+"/uploads", nil)
		req.Header.Set("Tus-Resumable", "1.0.0")
		req.Header.Set("Upload-Length", strconv.Itoa(len(data)))
		req.Header.Set("Upload-Metadata", tusMeta("path", "t"+strconv.Itoa(i), "overwrite", "true"))
		req.Header.Set("Authorization", "Bearer "+e.token(vfAlice))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			b.Fatalf("create: %d", resp.StatusCode)
		}
		url := api + resp.Header.Get("Location")
		for off := 0; off < len(data); off += chunk {
			req, _ := http.NewRequestWithContext(context.Background(), "PATCH", url, bytes.NewReader(data[off:min(off+chunk, len(data))]))
			req.Header.Set("Tus-Resumable", "1.0.0")
			req.Header.Set("Upload-Offset", strconv.Itoa(off))
			req.Header.Set("Upload-Checksum", sums[off])
			req.Header.Set("Content-Type", "application/offset+octet-stream")
			send(b, e, req, http.StatusNoContent, io.Discard)
		}
		tusT += time.Since(start)
		start = time.Now()
		req, _ = http.NewRequestWithContext(context.Background(), "PUT", folder+"/files/content?path=p"+strconv.Itoa(i), bytes.NewReader(data))
		send(b, e, req, http.StatusCreated, io.Discard)
		putT += time.Since(start)
	}
	mb := float64(size) * float64(b.N) / 1e6
	b.ReportMetric(mb/tusT.Seconds(), "tus-MB/s")
	b.ReportMetric(mb/putT.Seconds(), "put-MB/s")
	b.ReportMetric(putT.Seconds()/tusT.Seconds(), "x-put")
	b.ReportMetric(0, "ns/op")
}
