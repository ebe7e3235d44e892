package replayer

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// cancelThenList is a recorded stdio session whose client sent a
// resources/list and then cancelled its slow call; the server answered
// the cancelled call (after the cancellation) before the list.
var cancelThenList = []string{
	`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`,
	`> {"jsonrpc":"2.0","id":2,"method":"resources/list"}`,
	`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
	`< {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"cancelled"}}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"resources":[]}}`,
}

const (
	orderCall   = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`
	orderList   = `{"jsonrpc":"2.0","id":2,"method":"resources/list"}`
	orderCancel = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`
	orderErr    = `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"cancelled"}}`
	orderRes    = `{"jsonrpc":"2.0","id":2,"result":{"resources":[]}}`
)

func TestCursor_KeepsRecordedOrderOverStdio(t *testing.T) {
	c := newCursor([]*recording{stdioRecording(t, 1, cancelThenList...)}, Match{}, true)
	c.start()
	recv(t, c, orderCall)
	if got := recv(t, c, orderList); len(got) != 0 {
		t.Fatalf("after the list: released %q; want it held behind the answer to the call, which the server sent first", got)
	}
	if !c.holding() {
		t.Fatal("holding() = false while the list's answer is held")
	}
	if diff := cmp.Diff([]string{orderErr, orderRes}, recv(t, c, orderCancel)); diff != "" {
		t.Errorf("after the cancellation (-want +got):\n%s", diff)
	}
	if c.holding() {
		t.Error("holding() = true with nothing left to hold")
	}
}

func TestCursor_ConcurrentFramesInEitherOrder(t *testing.T) {
	// The client sends its cancellation and its list at once, and they
	// arrive the other way round: the answers still come in recorded
	// order.
	c := newCursor([]*recording{stdioRecording(t, 1, cancelThenList...)}, Match{}, true)
	c.start()
	recv(t, c, orderCall)
	if diff := cmp.Diff([]string{orderErr}, recv(t, c, orderCancel)); diff != "" {
		t.Errorf("after the cancellation (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{orderRes}, recv(t, c, orderList)); diff != "" {
		t.Errorf("after the list (-want +got):\n%s", diff)
	}
}

func TestCursor_GivesUpOrderWhenTheClientWaits(t *testing.T) {
	// A client that does not cancel waits for its list's answer: after
	// its silence, the answer goes out of recorded order.
	c := newCursor([]*recording{stdioRecording(t, 1, cancelThenList...)}, Match{}, true)
	c.start()
	recv(t, c, orderCall)
	recv(t, c, orderList)
	c.giveUpOrder()
	if diff := cmp.Diff([]string{orderRes}, datas(c.emit())); diff != "" {
		t.Errorf("after giving up the order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{orderErr}, recv(t, c, orderCancel)); diff != "" {
		t.Errorf("after a late cancellation (-want +got):\n%s", diff)
	}
}

func TestCursor_ClientWentPastOwedFrame(t *testing.T) {
	// The recorded client sent its cancellation well before the list: a
	// live one that sends the list without it went past it, and is
	// answered at once.
	rec := stdioRecording(t, 1,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`,
		`> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"resources/list"}`,
		`< {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"cancelled"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"resources":[]}}`,
	)
	rec.Frames[2].Offset = rec.Frames[1].Offset + 2*orderGrace
	rec.Frames[3].Offset, rec.Frames[4].Offset = rec.Frames[2].Offset, rec.Frames[2].Offset
	c := newCursor([]*recording{rec}, Match{}, true)
	c.start()
	c.receive(jsonrpc.Parse([]byte(orderCall)), nil)
	rc := c.receive(jsonrpc.Parse([]byte(orderList)), nil)
	if diff := cmp.Diff([]string{orderRes}, datas(rc.outs)); diff != "" {
		t.Errorf("after the list (-want +got):\n%s", diff)
	}
}

func TestCursor_HTTPIsNotOrdered(t *testing.T) {
	// Over HTTP each answer has its own stream: nothing is held.
	c := newCursor([]*recording{stdioRecording(t, 1, cancelThenList...)}, Match{}, false)
	c.start()
	c.receive(jsonrpc.Parse([]byte(orderCall)), nil)
	rc := c.receive(jsonrpc.Parse([]byte(orderList)), nil)
	if diff := cmp.Diff([]string{orderRes}, datas(rc.outs)); diff != "" {
		t.Errorf("after the list (-want +got):\n%s", diff)
	}
}
