package replayreport

import (
	"fmt"
	"strings"

	"github.com/mcpvcr/mcpvcr/store"
)

// Stall is an outstanding client request that the recording answers
// only after client frames this client has not sent, or never answers.
type Stall struct {
	// ID is the live request id; Request the recorded request.
	ID      string
	Request *store.Frame
	// Awaited are the recorded client frames the answer waits for, by
	// seq; empty when the recording holds no answer at all.
	Awaited []*store.Frame
	// Expected reports that the client is expected to send every awaited
	// frame on its own: its answers to server requests replay has sent,
	// or its cancellation of this request. Such a wait is ordinary and is
	// reported only when replay's wait runs out.
	Expected bool
	// Cancel is the recorded client's notifications/cancelled for this
	// request, which this client has not sent, when the recording holds
	// no answer before it: none at all (Awaited is empty), or a late one
	// after it (replay then waives the cancellation).
	Cancel *store.Frame
}

// Describe says what a stalled request waits for, with recorded seqs.
func (st Stall) Describe() string {
	what := "request"
	if st.Request != nil {
		what = fmt.Sprintf("request %s (recorded seq %d)", st.Request.Method, st.Request.Seq)
	}
	if st.Cancel != nil && len(st.Awaited) == 0 {
		return fmt.Sprintf("%s: the recording holds no answer to it: the recorded client cancelled it (notifications/cancelled, seq %d) and this client has not", what, st.Cancel.Seq)
	}
	if st.Cancel != nil && len(st.Awaited) == 1 && st.Awaited[0] == st.Cancel {
		return fmt.Sprintf("%s: the recording answers it only after the recorded client cancelled it (notifications/cancelled, seq %d), which this client has not", what, st.Cancel.Seq)
	}
	if len(st.Awaited) == 0 {
		return what + ": the recording holds no answer to it (the recorded client left before the answer came)"
	}
	return what + ": the recording answers it only after client frames this client has not sent:" + FrameList(st.Awaited)
}

// Mismatch is the mismatch st is reported as.
func (st Stall) Mismatch() *Mismatch {
	mm := &Mismatch{Reason: st.Describe()}
	if st.Request != nil {
		mm.Live = st.Request.Data
		mm.Closest = st.Request
	}
	return mm
}

// FrameList names frames as " seq 5 (request tools/list), seq 6 (…)".
func FrameList(fs []*store.Frame) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " seq %d (%s", f.Seq, f.Kind)
		if f.Method != "" {
			fmt.Fprintf(&b, " %s", f.Method)
		}
		b.WriteByte(')')
	}
	return b.String()
}
