package protocol

// The agent's log endpoint (served by agents/node, read by the manager's
// infra/agentlogs) answers a byte range of a kernel's log when asked with
// an offset:
//
//	GET /kernels/{kernel id}/logs?offset=<bytes>[&limit=<bytes>][&follow=true]
//
// with 200 text/plain and the bytes as the body, sent as they are read
// (chunked). The LogStartHeader header gives the log offset of the body's
// first byte; the trailers LogNextHeader and LogCompleteHeader give where
// the next read resumes and whether the log has ended there, and
// LogErrorTrailer, when set, says why the body ended early.
const (
	LogStartHeader    = "Cairn-Log-Start"
	LogNextHeader     = "Cairn-Log-Offset"
	LogCompleteHeader = "Cairn-Log-Complete"
	LogErrorTrailer   = "Cairn-Log-Error"
)
