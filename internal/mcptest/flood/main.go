// Command flood is a stdio MCP server that does nothing but send: it
// writes numbered notifications/message lines to stdout at a steady rate,
// for the reliability tests of mcpvcr record (kill -9 mid-stream, a full
// disk). Line n (from 1) carries "n":n, so a reader can tell a gap-free
// prefix from a recording with holes.
//
//	flood [-rate 10000] [-count 0] [-size 200] [-noise] [-for 60s]
//
// It stops after -count lines (0: no limit) or after -for, whichever
// comes first, and exits 0. With -noise each line's padding is random
// letters, which a compressed cassette cannot shrink (a full disk fills
// as fast as the lines come). It never reads stdin. A write error (its
// reader has gone) ends it at once.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"
)

func main() {
	rate := flag.Int("rate", 10000, "lines per second; 0 writes as fast as the reader takes them")
	count := flag.Int("count", 0, "stop after this many lines; 0 for no limit")
	size := flag.Int("size", 200, "approximate bytes per line")
	noise := flag.Bool("noise", false, "pad each line with random letters rather than a repeated one")
	limit := flag.Duration("for", 60*time.Second, "stop after this long in any case")
	flag.Parse()
	if err := flood(*rate, *count, *size, *noise, *limit); err != nil {
		fmt.Fprintln(os.Stderr, "flood:", err)
		os.Exit(1)
	}
}

// flood writes the lines. It paces itself by the clock every millisecond,
// writing the lines that are due, one write each.
func flood(rate, count, size int, noise bool, limit time.Duration) error {
	const head = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"n":`
	pad := []byte(strings.Repeat("x", max(0, size-len(head)-40)))
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	line := make([]byte, 0, size+64)
	for n := 1; count == 0 || n <= count; n++ {
		if rate > 0 {
			due := start.Add(time.Duration(n) * time.Second / time.Duration(rate))
			if d := time.Until(due); d > time.Millisecond {
				time.Sleep(d)
			}
		}
		if time.Since(start) > limit {
			return nil
		}
		if noise {
			for i := range pad {
				pad[i] = 'a' + byte(r.IntN(26))
			}
		}
		line = fmt.Appendf(line[:0], `%s%d,"pad":"%s"}}}`+"\n", head, n, pad)
		if _, err := os.Stdout.Write(line); err != nil {
			return err
		}
	}
	return nil
}
