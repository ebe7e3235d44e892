package store

import (
	"encoding/json"
	"mime"
	"net/http"
	"time"
)

// Direction says which way a frame travelled.
type Direction int

// Directions. Zero is unknown and is rejected on write.
const (
	DirectionUnknown Direction = iota
	ClientToServer
	ServerToClient
)

// String returns "c2s" or "s2c".
func (d Direction) String() string {
	switch d {
	case ClientToServer:
		return "c2s"
	case ServerToClient:
		return "s2c"
	}
	return "unknown"
}

// Transport is how a session reached the server.
type Transport int

// Transports. Zero is unknown and is rejected on write.
const (
	TransportUnknown Transport = iota
	Stdio
	StreamableHTTP
	LegacySSE // the 2024-11-05 HTTP+SSE transport
)

// String returns "stdio", "http" or "sse".
func (t Transport) String() string {
	switch t {
	case Stdio:
		return "stdio"
	case StreamableHTTP:
		return "http"
	case LegacySSE:
		return "sse"
	}
	return "unknown"
}

// StreamKind is what kind of channel a stream is.
type StreamKind int

// Stream kinds. Zero is unknown and is rejected on write.
const (
	StreamUnknown StreamKind = iota
	StdinStream              // stdio: the client's writes to the server's stdin
	StdoutStream             // stdio: the server's stdout
	StderrStream             // stdio: the server's stderr (never matched)
	PostStream               // HTTP: one POST and its JSON, SSE or empty answer
	GetStream                // HTTP: the standalone GET stream (or a 405 for it)
	ResumeStream             // HTTP: a GET with Last-Event-ID that resumes another stream
	DeleteStream             // HTTP: a DELETE ending a session
	ListenStream             // HTTP 2026-07-28: a subscriptions/listen POST stream
	SSEGetStream             // HTTP+SSE: the GET /sse stream carrying the endpoint event and all answers
	HTTPStream               // HTTP: a plain exchange beside MCP (OAuth metadata, registration, token), not JSON-RPC
)

var streamKindNames = [...]string{"unknown", "stdin", "stdout", "stderr", "post", "get", "resume", "delete", "listen", "sse", "http"}

// String returns the kind's short name.
func (k StreamKind) String() string {
	if k < 0 || int(k) >= len(streamKindNames) {
		return "unknown"
	}
	return streamKindNames[k]
}

// End says how a stream ended.
type End int

// Ways a stream ends. EndOpen means it has not ended (yet, or the recording
// was cut before it did).
const (
	EndOpen          End = iota
	EndComplete          // ended normally: EOF after everything expected
	EndServerClosed      // the server closed it early (before its response)
	EndClientAborted     // the client went away
	EndUpstreamError     // the upstream failed (connection refused, reset, bad status)
	EndProxyShutdown     // mcpvcr itself stopped
)

var endNames = [...]string{"open", "complete", "server-closed", "client-aborted", "upstream-error", "proxy-shutdown"}

// String returns the end's short name.
func (e End) String() string {
	if e < 0 || int(e) >= len(endNames) {
		return "unknown"
	}
	return endNames[e]
}

// Era is which handshake a session's revisions use.
type Era string

// Eras of a session. The empty Era is unknown.
const (
	EraLegacy Era = "legacy" // the initialize handshake (2024-11-05 to 2025-11-25)
	EraModern Era = "modern" // stateless, per-request _meta (2026-07-28)
	EraDual   Era = "dual"   // both seen: a dual-era client that fell back, or the reverse
)

// String returns the era's name, "" if unknown.
func (e Era) String() string { return string(e) }

// Session is one logical conversation: a stdio child run, one
// Mcp-Session-Id, one modern recording run, or one HTTP+SSE GET stream.
type Session struct {
	ID        int64 // assigned by the store
	Name      string
	Transport Transport
	// Revision is the protocol revision seen (the negotiated one in the
	// legacy era, the first _meta version in the modern era); "" if unknown.
	Revision string
	// Era is the era of the revisions seen; "" if unknown.
	Era Era
	// Upstream is the server command line (stdio) or URL (HTTP), redacted.
	Upstream string
	// ExternalID is the server's session id (Mcp-Session-Id or the HTTP+SSE
	// endpoint's sessionId), if any.
	ExternalID string
	StartedAt  time.Time // wall clock, for people; frames use offsets
	EndedAt    time.Time // zero while open
	// ExitCode is the stdio child's exit code, -1 if unknown.
	ExitCode   int
	ClientInfo json.RawMessage // from initialize params or modern _meta; nil if unseen
	ServerInfo json.RawMessage // from the initialize result or discover; nil if unseen
	Labels     map[string]string
	Note       string
}

// Stream is one ordered channel of bytes inside a session.
type Stream struct {
	ID        int64 // assigned by the store
	SessionID int64
	Kind      StreamKind
	// HTTP fields; zero for stdio.
	Method         string
	URL            string // redacted
	Status         int
	RequestHeader  http.Header // redacted
	ResponseHeader http.Header // redacted
	// ResumesID is the stream this one resumes (a GET with Last-Event-ID),
	// and LastEventID the id it sent.
	ResumesID   int64
	LastEventID string
	Opened      time.Duration // offset from session start
	Closed      time.Duration // offset; zero while open
	End         End
	Err         string // what went wrong, for the upstream-error kind
}

// SSE reports whether the stream was answered with an event stream: its
// response's Content-Type is text/event-stream (any case, with or without
// parameters). It is the one rule for it: a stream whose answer is not an
// event stream arrived whole, as one JSON body.
func (st *Stream) SSE() bool {
	mt, _, _ := mime.ParseMediaType(st.ResponseHeader.Get("Content-Type"))
	return mt == "text/event-stream"
}

// Frame is one message, SSE event, stderr line or comment, in total order
// within its session.
type Frame struct {
	SessionID int64
	StreamID  int64
	Seq       int64 // total order within the session, from 1
	Direction Direction
	Offset    time.Duration // monotonic, from session start
	// Raw is exactly the bytes on the wire: a stdio line with its newline,
	// a whole JSON body, or an SSE event block with its blank line. For an
	// oversize frame it is only the first bytes (see Oversize).
	Raw []byte
	// Oversize is the frame's true length on the wire when it was longer
	// than the recorder's limit (mcpvcr record --max-frame): it was
	// forwarded whole and Raw holds only its first bytes. 0 when Raw is
	// the whole frame.
	Oversize int64
	// Derived from Raw (see Derive).
	Kind      Kind
	ID        string // raw id token; "" when none
	Method    string
	Batch     bool
	Members   []Member // a batch's elements
	Malformed bool     // not valid JSON-RPC where a message was expected
	// SSE fields, set when the frame is an SSE event.
	SSE        bool
	EventID    string
	HasEventID bool
	Event      string
	Retry      int  // -1 when absent
	Comment    bool // an SSE comment block (keep-alive), never matched
	// Data is the JSON-RPC payload: Raw for stdio and JSON bodies, the
	// joined data lines for SSE events. It is derived, not stored twice.
	Data []byte
	// Events, when above 0, makes a frame given to DB.Append a run of that
	// many SSE events of one stream, with seqs Seq to Seq+Events-1, all
	// at Offset: Raw holds their blocks as the wire had them, and nothing
	// else is set but SSE, SessionID, StreamID and Direction. The store
	// keeps the run as it came and splits and derives its events when it
	// reads them, so that a recorder does not parse each event of a busy
	// stream as it forwards it (see pack.go), on a stream whose kind
	// takes runs (StreamKind.EventRuns), of events that mcpvcr's recorder
	// puts in runs (a read that does not split back into them reports the
	// pack damaged). Readers never see such a frame: every read returns
	// each event as a frame of its own.
	Events int
}

// Member is one element of a batch frame.
type Member struct {
	Kind   Kind
	ID     string
	Method string
}
