package view_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// harSchema resolves the HAR 1.2 schema committed in testdata/har/schema.
func harSchema(t testing.TB) *jsonschema.Resolved {
	t.Helper()
	dir := filepath.Join("testdata", "har", "schema")
	load := func(name string) (*jsonschema.Schema, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		s := new(jsonschema.Schema)
		if err := json.Unmarshal(b, s); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		s.Schema = "http://json-schema.org/draft-07/schema#" // see README.md
		return s, nil
	}
	root, err := load("har.json")
	must(t, err)
	rs, err := root.Resolve(&jsonschema.ResolveOptions{
		BaseURI: "https://har.test/",
		Loader:  func(u *url.URL) (*jsonschema.Schema, error) { return load(path.Base(u.Path)) },
	})
	if err != nil {
		t.Fatalf("resolve the HAR schema: %v", err)
	}
	return rs
}

// loadCassette imports a committed cassette into a fresh DB.
func loadCassette(t testing.TB, name string) (*store.DB, []int64) {
	t.Helper()
	in, err := os.ReadFile(filepath.Join("..", "cassettes", name))
	must(t, err)
	d := openDB(t)
	ids, err := d.Import(context.Background(), bytes.NewReader(in))
	must(t, err)
	return d, ids
}

type harDoc struct {
	Log struct {
		Version string
		Pages   []struct{ ID string }
		Entries []harEntry
	}
}

type harEntry struct {
	Time    float64
	PageRef string
	Request struct {
		Method, URL string
		Headers     []struct{ Name, Value string }
		PostData    *struct{ MimeType, Text string }
	}
	Response struct {
		Status  int
		Content struct {
			Size           int
			MimeType, Text string
		}
	}
	Timings      struct{ Blocked, DNS, Connect, Send, Wait, Receive, SSL float64 }
	ResourceType string `json:"_resourceType"`
	EventSource  []struct {
		Time                     float64
		EventName, EventID, Data string
		Retry                    *int `json:"_retry"`
	} `json:"_eventSourceMessages"`
	Stream  string `json:"_mcpvcrStream"`
	End     string `json:"_mcpvcrEnd"`
	Resumes string `json:"_mcpvcrResumes"`
}

func TestWriteHAR_Schema(t *testing.T) {
	// Every committed cassette exports as HAR that validates against the
	// HAR 1.2 schema, and time is the sum of the timings.
	rs := harSchema(t)
	// The schema is strict enough to fail: an entry without a response.
	bad := map[string]any{"log": map[string]any{"version": "1.2", "creator": map[string]any{"name": "x", "version": "1"},
		"entries": []any{map[string]any{"startedDateTime": "2026-01-01T00:00:00.000Z", "time": 0, "request": map[string]any{}}}}}
	if err := rs.Validate(bad); err == nil {
		t.Fatal("the HAR schema accepts an entry without response, cache or timings")
	}
	files, err := filepath.Glob(filepath.Join("..", "cassettes", "*.jsonl"))
	must(t, err)
	if len(files) == 0 {
		t.Fatal("no committed cassettes")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			d, ids := loadCassette(t, filepath.Base(f))
			var buf bytes.Buffer
			must(t, view.Export(context.Background(), d, &buf, "har", ids...))
			var inst any
			must(t, json.Unmarshal(buf.Bytes(), &inst))
			if err := rs.Validate(inst); err != nil {
				t.Fatalf("HAR export does not validate: %v", err)
			}
			var doc harDoc
			must(t, json.Unmarshal(buf.Bytes(), &doc))
			if got, want := len(doc.Log.Pages), len(ids); got != want {
				t.Errorf("pages = %d; want %d", got, want)
			}
			if len(doc.Log.Entries) == 0 {
				t.Fatal("no entries")
			}
			for i, e := range doc.Log.Entries {
				sum := 0.0
				for _, v := range []float64{e.Timings.Blocked, e.Timings.DNS, e.Timings.Connect, e.Timings.Send, e.Timings.Wait, e.Timings.Receive} {
					if v > 0 {
						sum += v
					}
				}
				if diff := sum - e.Time; diff > 0.002 || diff < -0.002 || e.Time < 0 {
					t.Errorf("entry %d: time %v, timings add up to %v", i, e.Time, sum)
				}
				if _, err := url.Parse(e.Request.URL); err != nil || !strings.Contains(e.Request.URL, "://") {
					t.Errorf("entry %d: url %q is not absolute", i, e.Request.URL)
				}
			}
		})
	}
}

func TestWriteHAR_HTTP(t *testing.T) {
	// A Streamable HTTP session: one entry per exchange, in the order they
	// opened, with headers, status, body and the SSE events listed.
	d, ids := loadCassette(t, "gosdk-http-2025-11-25.jsonl")
	ctx := context.Background()
	r, err := d.Recording(ctx, ids[0])
	must(t, err)
	var buf bytes.Buffer
	must(t, view.WriteHAR(&buf, r))
	var doc harDoc
	must(t, json.Unmarshal(buf.Bytes(), &doc))
	if got, want := len(doc.Log.Entries), len(r.Streams); got != want {
		t.Fatalf("entries = %d; want one per stream, %d", got, want)
	}
	labels := view.StreamLabels(r.Streams)
	byLabel := map[string]harEntry{}
	for _, e := range doc.Log.Entries {
		byLabel[e.Stream] = e
	}
	events := 0
	for _, st := range r.Streams {
		e, ok := byLabel[labels[st.ID]]
		if !ok {
			t.Fatalf("no entry for stream %s", labels[st.ID])
		}
		if e.Request.Method != st.Method || e.Response.Status != st.Status || e.End != st.End.String() {
			t.Errorf("%s: entry %s %d %s; want %s %d %s", labels[st.ID], e.Request.Method, e.Response.Status, e.End, st.Method, st.Status, st.End)
		}
		if want := "http://127.0.0.1"; !strings.HasPrefix(e.Request.URL, want) && !strings.HasPrefix(e.Request.URL, "http://mcpvcr.invalid") {
			t.Errorf("%s: url %q", labels[st.ID], e.Request.URL)
		}
		var body, sent []byte
		var sse []store.Frame
		for _, f := range r.Frames {
			if f.StreamID != st.ID {
				continue
			}
			if f.Direction == store.ClientToServer {
				sent = append(sent, f.Raw...)
				continue
			}
			body = append(body, f.Raw...)
			if f.SSE && !f.Comment {
				sse = append(sse, f)
			}
		}
		if e.Response.Content.Text != string(body) || e.Response.Content.Size != len(body) {
			t.Errorf("%s: content.text = %q; want the raw answer %q", labels[st.ID], e.Response.Content.Text, body)
		}
		if st.Method == "POST" && (e.Request.PostData == nil || e.Request.PostData.Text != string(sent)) {
			t.Errorf("%s: postData = %+v; want %q", labels[st.ID], e.Request.PostData, sent)
		}
		if got, want := len(e.EventSource), len(sse); got != want {
			t.Errorf("%s: %d _eventSourceMessages; want %d", labels[st.ID], got, want)
			continue
		}
		for i, f := range sse {
			m := e.EventSource[i]
			if m.Data != string(f.Data) || m.EventID != f.EventID {
				t.Errorf("%s event %d = %+v; want data %q id %q", labels[st.ID], i, m, f.Data, f.EventID)
			}
			if (f.Retry >= 0) != (m.Retry != nil) {
				t.Errorf("%s event %d: _retry %v; frame retry %d", labels[st.ID], i, m.Retry, f.Retry)
			}
		}
		if len(sse) > 0 && e.ResourceType != "eventsource" {
			t.Errorf("%s: _resourceType %q; want eventsource", labels[st.ID], e.ResourceType)
		}
		events += len(sse)
		if st.ResumesID != 0 && e.Resumes != labels[st.ResumesID] {
			t.Errorf("%s: _mcpvcrResumes = %q; want %q", labels[st.ID], e.Resumes, labels[st.ResumesID])
		}
	}
	if events == 0 {
		t.Error("no SSE events in the export; the cassette has some")
	}
}

func TestWriteHAR_Stdio(t *testing.T) {
	// A stdio session: an entry per request with its answer, at
	// mcp-stdio:// URLs, and the server's stderr as one entry.
	d, ids := loadCassette(t, "everything-stdio.jsonl")
	r, err := d.Recording(context.Background(), ids[0])
	must(t, err)
	var buf bytes.Buffer
	must(t, view.WriteHAR(&buf, r))
	var doc harDoc
	must(t, json.Unmarshal(buf.Bytes(), &doc))
	links := causal.Link(r)
	bySeq := map[int64]store.Frame{}
	for _, f := range r.Frames {
		bySeq[f.Seq] = f
	}
	found := map[string]harEntry{}
	for _, e := range doc.Log.Entries {
		found[e.Request.URL] = e
	}
	init := found["mcp-stdio://session-1/c2s/initialize?id=1"]
	if init.Response.Status != 200 || init.Request.PostData == nil {
		t.Fatalf("initialize entry = %+v", init)
	}
	var req, ans store.Frame
	for answer, request := range links.Request {
		if links.Method[answer] == "initialize" {
			req, ans = bySeq[request], bySeq[answer]
		}
	}
	if init.Request.PostData.Text != string(req.Raw) || init.Response.Content.Text != string(ans.Raw) {
		t.Errorf("initialize entry: sent %q got %q; want %q and %q", init.Request.PostData.Text, init.Response.Content.Text, req.Raw, ans.Raw)
	}
	stderr, ok := found["mcp-stdio://session-1/stderr"]
	if !ok || !strings.Contains(stderr.Response.Content.Text, "Starting default (STDIO) server") {
		t.Errorf("stderr entry = %+v", stderr)
	}
	for u, e := range found {
		if strings.Contains(u, "/notifications/") && e.Response.Status != 202 {
			t.Errorf("%s: status %d; want 202 for a notification", u, e.Response.Status)
		}
	}
}
