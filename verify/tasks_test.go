package verify

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/storetest"
)

// TestVerifier_TaskPolls: the recorded client created a task and polled
// it 200 and 400 ms after its creation (working, then completed), then
// fetched its result. The live task takes 700 ms. The polls go at their
// recorded time since the live task's creation, with the live task id;
// the second finds the task working and is followed by polls of
// verify's own, 200 ms apart, until it completes; tasks/result waits for
// them.
func TestVerifier_TaskPolls(t *testing.T) {
	const (
		call  = `> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"research","task":{"ttl":60000}}}`
		get1  = `> {"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t-rec"}}`
		get2  = `> {"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"t-rec"}}`
		fetch = `> {"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":"t-rec"}}`
	)
	rec := storetest.LineRecording(t, 1, initReq, initResp, inited,
		call, `< {"jsonrpc":"2.0","id":2,"result":{"task":{"taskId":"t-rec","status":"working","ttl":60000}}}`,
		get1, `< {"jsonrpc":"2.0","id":3,"result":{"taskId":"t-rec","status":"working","ttl":60000}}`,
		get2, `< {"jsonrpc":"2.0","id":4,"result":{"taskId":"t-rec","status":"completed","ttl":60000}}`,
		fetch, `< {"jsonrpc":"2.0","id":5,"result":{"content":[]}}`)
	ms := time.Millisecond
	for i, at := range []time.Duration{0, 1 * ms, 2 * ms, 3 * ms, 10 * ms, 210 * ms, 211 * ms, 410 * ms, 411 * ms, 412 * ms, 413 * ms} {
		rec.Frames[i].Offset = at
	}
	var (
		mu      sync.Mutex
		created time.Time
		sent    []string        // method, id and taskId of each task request
		after   []time.Duration // when each came, since the creation
	)
	const took = 700 * time.Millisecond
	srv := startFake(t, func(m jsonrpc.Message) ([]string, error) {
		mu.Lock()
		defer mu.Unlock()
		switch m.Method {
		case "initialize":
			return []string{result(string(m.ID), liveInit)}, nil
		case "tools/call":
			created = time.Now()
			return []string{result(string(m.ID), `{"task":{"taskId":"t-live","status":"working","ttl":60000}}`)}, nil
		case "tasks/get", "tasks/result":
			tid, _ := jsonrpc.Lookup(m.Params, "taskId")
			since := time.Since(created)
			sent, after = append(sent, m.Method+" "+string(m.ID)+" "+string(tid)), append(after, since)
			if m.Method == "tasks/result" {
				return []string{result(string(m.ID), `{"content":[]}`)}, nil
			}
			status := "working"
			if since >= took {
				status = "completed"
			}
			return []string{result(string(m.ID), `{"taskId":"t-live","status":"`+status+`","ttl":60000}`)}, nil
		}
		return nil, nil
	})
	vr, err := (&Verifier{Recording: rec}).RunStdio(verifyCtx(t), srv)
	if err != nil {
		t.Fatalf("RunStdio = %v", err)
	}
	srv.lines()
	mu.Lock()
	defer mu.Unlock()
	if len(vr.NoAnswer) != 0 || vr.Sent != 6 {
		t.Errorf("Run = %+v; want 6 frames sent, all answered", vr)
	}
	// get1 at 200 ms, get2 at 400 ms (working), own polls at 600 ms
	// (working) and 800 ms (completed), then tasks/result.
	want := []string{`tasks/get 3 "t-live"`, `tasks/get 4 "t-live"`, `tasks/get "mcpvcr-verify-poll-1" "t-live"`,
		`tasks/get "mcpvcr-verify-poll-2" "t-live"`, `tasks/result 5 "t-live"`}
	if strings.Join(sent, "\n") != strings.Join(want, "\n") {
		t.Fatalf("task requests:\n%s\nwant:\n%s", strings.Join(sent, "\n"), strings.Join(want, "\n"))
	}
	for i, min := range []time.Duration{200 * ms, 400 * ms, 600 * ms, took, took} {
		if after[i] < min-5*ms {
			t.Errorf("%s came %v after the creation; want at least %v", sent[i], after[i], min)
		}
	}
	if after[4] > 2*time.Second {
		t.Errorf("tasks/result came %v after the creation; want soon after the task completed", after[4])
	}
}
