package verify_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/verify"
)

// recorded is a JSONL export of a short stdio session: initialize, then
// tools/list, which listed one tool.
const recorded = `{"type":"mcpvcr","version":1}
{"type":"session","id":1,"name":"v1","transport":"stdio","revision":"2025-06-18","era":"legacy","exit_code":0}
{"type":"stream","id":1,"session":1,"kind":"stdin","end":"complete"}
{"type":"stream","id":2,"session":1,"kind":"stdout","end":"complete"}
{"type":"frame","session":1,"seq":1,"stream":1,"dir":"c2s","raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}}\n"}
{"type":"frame","session":1,"seq":2,"stream":2,"dir":"s2c","raw":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"s\",\"version\":\"1\"}}}\n"}
{"type":"frame","session":1,"seq":3,"stream":1,"dir":"c2s","raw":"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"}
{"type":"frame","session":1,"seq":4,"stream":1,"dir":"c2s","raw":"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"}
{"type":"frame","session":1,"seq":5,"stream":2,"dir":"s2c","raw":"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"add\"}]}}\n"}
`

// server is the release under test, a stdio server in sh: it now lists
// a second tool.
const server = `while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
  *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}\n' "$id" ;;
  *'"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"add"},{"name":"multiply"}]}}\n' "$id" ;;
  esac
done`

// Verify a recorded session against a new release of its server: the run
// is recorded into the cassette as session 2 and compared with session 1.
func ExampleCassette() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "verify-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(ctx, filepath.Join(dir, "cassette.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Import(ctx, bufio.NewReader(strings.NewReader(recorded))); err != nil {
		log.Fatal(err)
	}

	reports, err := verify.Cassette(ctx, db, verify.Options{
		Session: 1,
		Target:  verify.Target{Command: []string{"sh", "-c", server}},
	})
	if err != nil {
		log.Fatal(err)
	}
	r := reports[0]
	fmt.Println("old", r.Old.ID, "new", r.New.ID, "differs:", r.Differs())
	for _, rd := range r.Requests {
		for _, c := range rd.Changes {
			fmt.Println(rd.Label(), c.Path, c.Kind)
		}
	}
	// Output:
	// old 1 new 2 differs: true
	// tools/list (seq 4) result.tools[name=multiply] added
}
