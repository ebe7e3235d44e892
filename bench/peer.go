package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// The tools of the minimal server. A tools/call of toolBig is answered
// with a 2 KB JSON result; one of toolStream with streamEvents-1
// notifications and then the result, as SSE over HTTP or as lines over
// stdio.
const (
	toolBig      = "big"
	toolStream   = "stream"
	resultSize   = 2 << 10
	streamEvents = 100
	noteSize     = 200
)

// request returns the tools/call request with the given id and tool.
func request(id int64, tool string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool)
}

// bigResult returns the JSON-RPC result answering id, padded to about
// resultSize bytes.
func bigResult(id json.RawMessage) []byte {
	const head, mid, tail = `{"jsonrpc":"2.0","id":`, `,"result":{"content":[{"type":"text","text":"`, `"}],"isError":false}}`
	pad := max(0, resultSize-len(head)-len(mid)-len(tail)-len(id))
	b := make([]byte, 0, resultSize+1)
	b = append(b, head...)
	b = append(b, id...)
	b = append(b, mid...)
	b = append(b, strings.Repeat("x", pad)...)
	return append(b, tail...)
}

// notes are the notifications sent while a toolStream call runs, made
// once so that the server spends its time on the wire.
var notes = func() [][]byte {
	ns := make([][]byte, streamEvents-1)
	for i := range ns {
		ns[i] = note(i)
	}
	return ns
}()

// note returns the i-th logging notification sent while a toolStream call
// runs, about noteSize bytes.
func note(i int) []byte {
	const head, tail = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"bench","data":"`, `"}}`
	b := fmt.Appendf(nil, "%sstep %03d ", head, i)
	b = append(b, strings.Repeat("y", max(0, noteSize-len(b)-len(tail)))...)
	return append(b, tail...)
}

// streamResult returns the small result that ends a toolStream call.
func streamResult(id json.RawMessage) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done"}]}}`, id)
}

// toolOf returns the tool a tools/call request names.
func toolOf(params json.RawMessage) string {
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Name
}

// httpPeer is the minimal MCP-shaped HTTP server: it answers every POSTed
// tools/call, without sessions, as JSON (toolBig) or as an SSE stream
// flushed after each event (toolStream). Anything else gets 202.
type httpPeer struct{}

func (httpPeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	m := jsonrpc.Parse(body)
	if m.Kind != jsonrpc.KindRequest {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if toolOf(m.Params) != toolStream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(bigResult(m.ID))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	buf := make([]byte, 0, 512)
	for i := range streamEvents - 1 {
		buf = append(append(append(buf[:0], "event: message\ndata: "...), notes[i]...), "\n\n"...)
		if _, err := w.Write(buf); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
	buf = append(append(append(buf[:0], "event: message\ndata: "...), streamResult(m.ID)...), "\n\n"...)
	_, _ = w.Write(buf)
}

// serveStdio is the minimal MCP-shaped stdio server: for every request
// line it writes the answer (and, for toolStream, the notifications
// before it), one write per line as an SDK's server does. It returns at
// the end of in.
func serveStdio(in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	line := make([]byte, 0, resultSize+64)
	for {
		req, err := r.ReadSlice('\n')
		if len(bytes.TrimSpace(req)) > 0 {
			m := jsonrpc.Parse(req)
			if m.Kind == jsonrpc.KindRequest {
				if toolOf(m.Params) == toolStream {
					for i := range streamEvents - 1 {
						if _, err := out.Write(append(append(line[:0], notes[i]...), '\n')); err != nil {
							return err
						}
					}
					line = append(append(line[:0], streamResult(m.ID)...), '\n')
				} else {
					line = append(append(line[:0], bigResult(m.ID)...), '\n')
				}
				if _, err := out.Write(line); err != nil {
					return err
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}
