package recorder_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
)

// Record a stdio session: mcpvcr runs the server (here a one-line sh
// server), forwards the client's bytes to it and its answers back
// unchanged, and records every line as a frame.
func ExampleCommand() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "record-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(ctx, filepath.Join(dir, "bug.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	server := `read -r line; echo '{"jsonrpc":"2.0","id":1,"result":{}}'`
	rec := &recorder.Command{
		Argv:     []string{"sh", "-c", server},
		Recorder: recorder.Stdio{Sink: db, Session: store.Session{Name: "example"}},
	}
	var toClient bytes.Buffer
	client := struct {
		io.Reader
		io.Writer
	}{strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"), &toClient}
	res, err := rec.Run(ctx, client)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("the client got %s", toClient.String())
	fmt.Println("the server exited with", res.ExitCode)

	if err := db.Flush(ctx); err != nil {
		log.Fatal(err)
	}
	r, err := db.Recording(ctx, res.SessionID)
	if err != nil {
		log.Fatal(err)
	}
	kinds := map[int64]store.StreamKind{}
	for _, st := range r.Streams {
		kinds[st.ID] = st.Kind
	}
	for _, f := range r.Frames {
		fmt.Printf("%s %s %q\n", f.Direction, kinds[f.StreamID], f.Raw)
	}
	// Output:
	// the client got {"jsonrpc":"2.0","id":1,"result":{}}
	// the server exited with 0
	// c2s stdin "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
	// s2c stdout "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"
}
