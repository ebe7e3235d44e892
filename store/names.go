package store

import (
	"fmt"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// The enums are stored by name, so that the cassette reads well in the
// sqlite3 shell and in JSONL, and so that reordering the Go constants can
// never change what a file means. These parse the names back.

func parseDirection(s string) (Direction, error) {
	for d := ClientToServer; d <= ServerToClient; d++ {
		if d.String() == s {
			return d, nil
		}
	}
	return DirectionUnknown, fmt.Errorf("unknown direction %q", s)
}

func parseTransport(s string) (Transport, error) {
	for t := Stdio; t <= LegacySSE; t++ {
		if t.String() == s {
			return t, nil
		}
	}
	return TransportUnknown, fmt.Errorf("unknown transport %q", s)
}

func parseStreamKind(s string) (StreamKind, error) {
	for k := StdinStream; int(k) < len(streamKindNames); k++ {
		if k.String() == s {
			return k, nil
		}
	}
	return StreamUnknown, fmt.Errorf("unknown stream kind %q", s)
}

func parseEnd(s string) (End, error) {
	for e := EndOpen; int(e) < len(endNames); e++ {
		if e.String() == s {
			return e, nil
		}
	}
	return EndOpen, fmt.Errorf("unknown stream end %q", s)
}

func parseKind(s string) (Kind, error) {
	k := jsonrpc.ParseKind(s)
	if k == jsonrpc.KindInvalid && s != jsonrpc.KindInvalid.String() {
		return KindInvalid, fmt.Errorf("unknown message kind %q", s)
	}
	return k, nil
}

func validDirection(d Direction) bool { return d == ClientToServer || d == ServerToClient }
func validTransport(t Transport) bool { return t >= Stdio && t <= LegacySSE }
func validStreamKind(k StreamKind) bool {
	return k > StreamUnknown && int(k) < len(streamKindNames)
}
func validEnd(e End) bool { return e >= EndOpen && int(e) < len(endNames) }
