package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"io"
)

// ReadLines sends each non-blank line read from src to lines, with its
// newline if it had one, until ctx ends, and the error that ends reading
// to errc.
func ReadLines(ctx context.Context, src io.Reader, lines chan<- []byte, errc chan<- error) {
	br := bufio.NewReaderSize(src, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			select {
			case lines <- line:
			case <-ctx.Done():
				return
			}
		}
		if err != nil {
			errc <- err
			return
		}
	}
}

// Line returns b as one line: with its newline, added when missing.
func Line(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return b
	}
	return append(b[:len(b):len(b)], '\n')
}
