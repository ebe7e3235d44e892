package jsonrpc

import (
	"fmt"
	"strings"
	"testing"
)

// benchLine is a JSON-RPC result line of n bytes.
func benchLine(n int) []byte {
	const head, tail = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"`, `"}]}}` + "\n"
	return []byte(head + strings.Repeat("x", n-len(head)-len(tail)) + tail)
}

// BenchmarkParse measures what the recorder pays per frame to derive its
// kind, id and method: go test -bench Parse ./internal/jsonrpc.
func BenchmarkParse(b *testing.B) {
	for _, n := range []int{200, 2048, 65536} {
		l := benchLine(n)
		b.Run(fmt.Sprintf("size=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(l)))
			for b.Loop() {
				if Parse(l).Kind != KindResult {
					b.Fatal("not a result")
				}
			}
		})
	}
}
