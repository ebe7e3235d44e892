package matrix

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// tsServerScript is the TypeScript SDK server written for the matrix.
func tsServerScript(tb testing.TB) (node, script string) {
	tb.Helper()
	node = mcptest.Everything(tb)[0] // the SDK comes with the reference server
	script, err := filepath.Abs(filepath.Join("testdata", "server.mjs"))
	if err != nil {
		tb.Fatal(err)
	}
	return node, script
}

var listeningRE = regexp.MustCompile(`^listening on (http://\S+)$`)

// startTSServer starts the TypeScript SDK server on Streamable HTTP and
// returns its URL; it is stopped when the test ends.
func startTSServer(tb testing.TB) endpoint {
	tb.Helper()
	node, script := tsServerScript(tb)
	cmd := exec.Command(node, script, "http")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start the TypeScript server: %v", err)
	}
	done := make(chan struct{})
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
	}()
	go func() { cmd.Wait(); close(done) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	select {
	case u := <-urlc:
		return endpoint{transport: "http", url: u}
	case <-done:
		tb.Fatalf("the TypeScript server exited before listening:\n%s", stderr.String())
	case <-time.After(30 * time.Second):
		tb.Fatalf("the TypeScript server did not say where it listens:\n%s", stderr.String())
	}
	return endpoint{}
}
