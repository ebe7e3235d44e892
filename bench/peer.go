package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"

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
	b = append(b, padding(pad, 'x', int(crc32.ChecksumIEEE(id)))...)
	return append(b, tail...)
}

// benchTextEnv names the environment variable by which bench -text words
// reaches the peer processes.
const benchTextEnv = "MCPVCR_BENCH_TEXT"

// textVariants is how many different paddings of a length -text words
// makes: enough that the frames of one pack (at most 256) rarely repeat.
const textVariants = 1024

// words are what -text words pads payloads with.
var words = strings.Fields(`the a of to and in is for on with that by this be are from at as it or an was
tool call result error progress step file read write index module function request answer stream
event session server client token line page record replay parse build test check value field`)

// textWords is set by -text words, in the bench and in its peer
// processes (see benchTextEnv).
var textWords bool

// paddings holds, per length, the variants -text words pads with.
var paddings sync.Map // int -> []string

// padding returns n bytes to pad variant i of a payload with: one letter
// repeated, or with -text words (textWords) words drawn at random,
// which compress about as much as JSON-RPC traffic of varied text does
// (3x with S2) where one letter compresses 30x and more.
func padding(n int, letter byte, i int) string {
	if !textWords {
		return strings.Repeat(string(letter), n)
	}
	v, ok := paddings.Load(n)
	if !ok {
		r := rand.New(rand.NewPCG(uint64(n), 0))
		vs := make([]string, textVariants)
		for k := range vs {
			var b []byte
			for len(b) < n {
				b = append(append(b, words[r.IntN(len(words))]...), ' ')
			}
			vs[k] = string(b[:n])
		}
		v, _ = paddings.LoadOrStore(n, vs)
	}
	return v.([]string)[uint(i)%textVariants]
}

// notes are the notifications sent while a toolStream call runs, made
// once so that the server spends its time on the wire.
var notes = sync.OnceValue(func() [][]byte {
	ns := make([][]byte, streamEvents-1)
	for i := range ns {
		ns[i] = note(i)
	}
	return ns
})

// note returns the i-th logging notification sent while a toolStream call
// runs, about noteSize bytes.
func note(i int) []byte {
	const head, tail = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"bench","data":"`, `"}}`
	b := fmt.Appendf(nil, "%sstep %03d ", head, i)
	b = append(b, padding(max(0, noteSize-len(b)-len(tail)), 'y', i)...)
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
		buf = append(append(append(buf[:0], "event: message\ndata: "...), notes()[i]...), "\n\n"...)
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
						if _, err := out.Write(append(append(line[:0], notes()[i]...), '\n')); err != nil {
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
