package apibench

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/common/expfmt"
)

// Metrics the benchmark reads from the server's /metrics.
const (
	metricWritten = "cairn_access_records_written_total" // infra/accesslog
	metricSealed  = "cairn_audit_records_sealed_total"   // commands/auditseq
)

// counters are the audit trail's progress as the server reports it.
type counters struct {
	// Written is how many access records the access-log writer appended.
	Written int64
	// Sealed is how many access records the sequencer sealed.
	Sealed int64
}

// counters scrapes base's /metrics.
func (c *client) counters(ctx context.Context, base string) (counters, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return counters{}, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return counters{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return counters{}, fmt.Errorf("GET /metrics: status %d", resp.StatusCode)
	}
	var p expfmt.TextParser
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return counters{}, fmt.Errorf("GET /metrics: %w", err)
	}
	var out counters
	for name, dst := range map[string]*int64{metricWritten: &out.Written, metricSealed: &out.Sealed} {
		f, ok := families[name]
		if !ok {
			return counters{}, fmt.Errorf("GET /metrics: no %s", name)
		}
		var sum float64
		for _, m := range f.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
		*dst = int64(sum)
	}
	return out, nil
}
