package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

// RevisionError reports a live server that speaks another protocol
// revision than the recorded session.
type RevisionError struct {
	// Recorded is the session's revision; Live what the server answered
	// ("" if it answered with an error, see Detail).
	Recorded, Live string
	Detail         string
}

// Error says which revisions disagree.
func (e *RevisionError) Error() string {
	if e.Live != "" {
		return fmt.Sprintf("the server speaks protocol revision %s, but the session was recorded at %s", e.Live, e.Recorded)
	}
	return fmt.Sprintf("the server does not speak protocol revision %s, at which the session was recorded: %s", e.Recorded, e.Detail)
}

// checkRevision compares the live answer to the first request with the
// recorded one.
// how is how HTTP refused the request ("" if it did not).
func checkRevision(s store.Session, req, rec, live jsonrpc.Message, how string) error {
	want := s.Revision
	if live.Kind == jsonrpc.KindError && rec.Kind == jsonrpc.KindResult {
		var e struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(live.Error, &e)
		detail := fmt.Sprintf("it answered %s with error %d %q", req.Method, e.Code, e.Message)
		if how != "" {
			detail = fmt.Sprintf("it refused %s with %s, error %d %q", req.Method, how, e.Code, e.Message)
		}
		if len(e.Data) > 0 {
			detail += " " + string(e.Data)
		}
		return &RevisionError{Recorded: want, Detail: detail}
	}
	if live.Kind != jsonrpc.KindResult || want == "" {
		return nil
	}
	var r struct {
		ProtocolVersion   string   `json:"protocolVersion"`
		SupportedVersions []string `json:"supportedVersions"`
	}
	_ = json.Unmarshal(live.Result, &r)
	switch {
	case req.Method == "initialize" && r.ProtocolVersion != want:
		return &RevisionError{Recorded: want, Live: r.ProtocolVersion}
	case req.Method == "server/discover" && mcpwire.IsModern(want) && !slices.Contains(r.SupportedVersions, want):
		return &RevisionError{Recorded: want, Detail: "its server/discover lists only " + strings.Join(r.SupportedVersions, ", ")}
	}
	return nil
}

// first waits for the answer to the first request and checks that the
// server speaks the recorded revision.
func (d *driver) first(ctx context.Context, st *step) error {
	var id string
	for _, m := range st.msgs {
		if m.Kind == jsonrpc.KindRequest {
			id = string(m.ID)
			break
		}
	}
	if err := d.await(ctx, []wait{{kind: waitAnswer, id: id}}); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.abort != nil:
		return nil // run returns it
	case d.isAnswered(id):
		return nil
	case d.gone != nil:
		return fmt.Errorf("%w: %w", ErrNoAnswer, d.gone)
	case d.timedOut[id]:
		return fmt.Errorf("%w within %v", ErrNoAnswer, d.timeout)
	}
	rec, recorded := d.p.responses[id]
	if how, ok := d.refusals[id]; ok {
		if !recorded || rec.Kind != jsonrpc.KindResult {
			return nil // refused as recorded: compared like any answer
		}
		if req, ok := d.p.handshake[id]; ok {
			return &RevisionError{Recorded: d.v.Recording.Session.Revision, Detail: fmt.Sprintf("it refused %s with %s", req.Method, how)}
		}
		return fmt.Errorf("%w: the server refused it with %s", ErrNoAnswer, how)
	}
	return fmt.Errorf("%w: the server ended the exchange without an answer", ErrNoAnswer)
}
