package sse_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/sse"
)

// A proxy forwards each chunk as it arrives, then feeds it to a Splitter to
// record the events the chunk completed.
func ExampleSplitter() {
	upstream := strings.NewReader("id: 0\ndata: \n\n: keep-alive\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\ndata: {\"cut")
	var client bytes.Buffer

	var s sse.Splitter
	var evs []sse.Event
	buf := make([]byte, 16)
	for {
		n, err := upstream.Read(buf)
		client.Write(buf[:n]) // and flush
		evs = s.Feed(evs[:0], buf[:n])
		for _, e := range evs {
			fmt.Printf("event %q comment=%v id=%q data=%q\n", e.Raw, e.Comment, e.ID, e.Data)
		}
		if err == io.EOF {
			break
		}
	}
	if e, ok := s.End(); ok {
		fmt.Printf("stream ended mid-event: %q partial=%v\n", e.Raw, e.Partial)
	}
	// Output:
	// event "id: 0\ndata: \n\n" comment=false id="0" data=""
	// event ": keep-alive\n\n" comment=true id="" data=""
	// event "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n" comment=false id="" data="{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"
	// stream ended mid-event: "data: {\"cut" partial=true
}

func ExampleReader() {
	r := sse.NewReader(strings.NewReader("event: endpoint\r\ndata: /messages?sessionId=42\r\n\r\n"))
	for {
		e, err := r.Next()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %s\n", e.Type, e.Data)
	}
	// Output:
	// endpoint: /messages?sessionId=42
	// EOF
}

// The replayer writes a recorded event with only the JSON-RPC id in its data
// changed.
func ExampleEvent_WithData() {
	recorded, _ := sse.NewReader(strings.NewReader("event: message\r\nid: e7\r\ndata: {\"id\":1,\"result\":{}}\r\n\r\n")).Next()
	live := recorded.WithData([]byte(`{"id":"abc","result":{}}`))
	var w bytes.Buffer
	if err := sse.Encode(&w, live); err != nil {
		fmt.Println(err)
	}
	fmt.Printf("%q\n", w.String())
	// Output:
	// "event: message\r\nid: e7\r\ndata: {\"id\":\"abc\",\"result\":{}}\r\n\r\n"
}

func ExampleAppendEvent() {
	priming := sse.AppendEvent(nil, "0", "", []byte{}, 1000)
	fmt.Printf("%q\n", priming)
	os.Stdout.Write(sse.AppendEvent(nil, "", "message", []byte(`{"jsonrpc":"2.0","method":"notifications/progress"}`), -1))
	// Output:
	// "id: 0\nretry: 1000\ndata: \n\n"
	// event: message
	// data: {"jsonrpc":"2.0","method":"notifications/progress"}
}
