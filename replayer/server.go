package replayer

import (
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpvcr/mcpvcr/clock"
	"github.com/mcpvcr/mcpvcr/store"
)

// ErrNoRecordings is returned when a Server has nothing to replay.
var ErrNoRecordings = errors.New("no recorded sessions to replay")

// DefaultWait is the Server's Wait when none is set.
const DefaultWait = 10 * time.Second

// Server replays recorded sessions as the server they recorded. Each
// client that connects is matched against every recording until its
// frames single one out.
type Server struct {
	// Recordings are the sessions to replay. Required unless Source is
	// set.
	Recordings []*store.Recording
	// Source, if set and Recordings is empty, is where replay finds its
	// sessions: through the cassette's replay index under Match (built on
	// first use of each set of rules), loading only the candidates in
	// play, so that start and memory do not grow with the cassette. Over
	// HTTP, what is answered from every session at once is read from an
	// index of those exchanges likewise (see Server.Load).
	Source *Source
	// Pace scales the recorded gaps between frames: 0 sends everything as
	// soon as it is due, 1 keeps the recorded timing, 2 doubles it.
	Pace float64
	// Clock paces replay. If nil, the real clock is used.
	Clock clock.Clock
	// Logger receives diagnostics. If nil, nothing is logged.
	Logger *slog.Logger
	// Trace, if not nil, gets a line for each recorded server frame
	// written over stdio: its recorded seq, what it is, and the recorded
	// client frame whose live counterpart released it (or what else did:
	// the start, a wait). A frame is never released by a client frame
	// recorded after it; the trace shows that it was not.
	Trace io.Writer
	// Faults inject failures into HTTP replay: they are the first Hook,
	// called along with Hook (see Faults.Act).
	Faults Faults
	// Hook, if not nil, is called where a fault can act (see Hook);
	// package chaos is one. If nil, replay goes as recorded.
	Hook Hook
	// Strict also checks the client's side of the transport: the headers
	// the negotiated revision requires. Violations are answered with 400,
	// as a strict server would, and reported like unmatched frames.
	Strict bool
	// Match says how client frames are compared with recorded ones. The
	// zero Match is tolerant (see Match).
	Match Match
	// Wait is how long a client request may wait for an answer that the
	// recording gives only after client frames this client has not sent
	// (or never gives) before it is answered with a -32019 error naming
	// them. If zero, DefaultWait; if negative, it waits for good. A stall
	// is logged at once either way.
	Wait time.Duration
	// Settle is how long a client that waits for an answer may stay
	// silent, while candidate sessions still disagree on the answer,
	// before replay settles on the first candidate (in recorded order)
	// that has one. If zero, DefaultSettle.
	Settle time.Duration

	httpOnce sync.Once
	hs       *httpState
	poolOnce sync.Once
	pl       *pool // nil when no modern HTTP session is replayed
	recsOnce sync.Once
	recs     []*recording
	allOnce  sync.Once    // reads all, for HTTP replay from a Source
	all      []*recording // every session of Source, once needed
	aoOnce   sync.Once    // reads ao
	ao       *atOnce      // Source's index of what HTTP answers at once; nil if none
}

func (s *Server) clock() clock.Clock {
	if s.Clock == nil {
		return clock.Real{}
	}
	return s.Clock
}

// recordings returns Recordings with what replay derives from each,
// built once and shared by every client.
func (s *Server) recordings() []*recording {
	s.recsOnce.Do(func() { s.recs = wrap(s.Recordings) })
	return s.recs
}

func (s *Server) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

func (s *Server) wait() time.Duration {
	if s.Wait == 0 {
		return DefaultWait
	}
	return s.Wait
}

func (s *Server) settle() time.Duration {
	if s.Settle <= 0 {
		return DefaultSettle
	}
	return s.Settle
}

func (s *Server) waitText() string {
	if s.wait() < 0 {
		return "forever (--wait 0)"
	}
	return s.wait().String() + ", then it is answered with -32019"
}
