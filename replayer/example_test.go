package replayer_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// Replay a recorded Streamable HTTP session with httptest: the server
// answers the client's initialize as recorded, with the client's own id
// (7, where the recording has 1), and issues the recorded session id,
// although this client names itself differently from the recorded one.
func ExampleServer_http() {
	recs, err := store.LoadFile(context.Background(), filepath.Join("..", "cassettes", "gosdk-http-2025-06-18.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	srv := &replayer.Server{Recordings: recs}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close() // runs first: ends held streams so that ts can close

	body := `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
		`"capabilities":{"sampling":{},"elicitation":{},"roots":{"listChanged":true}},"clientInfo":{"name":"example","version":"0.1"}}}`
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	fmt.Println(resp.Status, resp.Header.Get("Content-Type"), resp.Header.Get("Mcp-Session-Id") != "")
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			fmt.Println(data[:strings.Index(data, `"result"`)])
			fmt.Println(strings.Contains(data, `"serverInfo":{"name":"mcptest","version":"1.0.0"}`))
			break
		}
	}
	// Output:
	// 200 OK text/event-stream true
	// {"jsonrpc":"2.0","id":7,
	// true
}
