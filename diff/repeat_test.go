package diff

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestWriteText_FoldsRepeats: a difference every session shows is listed
// once, naming the sessions, not once per session; one session's own is
// listed under it; the last line adds the sessions up, counting requests
// as each session's summary does.
func TestWriteText_FoldsRepeats(t *testing.T) {
	a, b := reportWithEverything(t), reportWithEverything(t)
	b.Old.ID, b.New.ID = 3, 4
	b.Requests = append(b.Requests, RequestDiff{Seq: 11, Method: "prompts/get", Name: "hello", Status: StatusMissing, Reason: "not sent"})
	var out bytes.Buffer
	if err := Write(&out, "text", a, b); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	t.Logf("%s", got)
	for _, want := range []string{
		"3 differences repeated in several sessions, listed once:\nin sessions 1, 3, every session compared:\ntools/list: 1 change",
		"prompts/get hello (seq 11): missing: not sent",
		"(and 3 differences listed above, repeated in other sessions)",
		"in all: 2 sessions compared, 2 with differences; 5 of 9 requests differ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if n := strings.Count(got, "tools/list: 1 change"); n != 1 {
		t.Errorf("tools/list's change is listed %d times; want once", n)
	}
}

// TestWriteJSON_CountsAsText: the JSON report of several sessions counts
// as the text report does: each report's counts and the summary across
// them say the text's lines, and a difference found in several sessions
// is listed once in the summary and names them where it is.
func TestWriteJSON_CountsAsText(t *testing.T) {
	a, b := reportWithEverything(t), reportWithEverything(t)
	b.Old.ID, b.New.ID = 3, 4
	b.Requests = append(b.Requests, RequestDiff{Seq: 11, Method: "prompts/get", Name: "hello", Status: StatusMissing, Reason: "not sent"})
	var text, js bytes.Buffer
	if err := Write(&text, "text", a, b); err != nil {
		t.Fatal(err)
	}
	if err := Write(&js, "json", a, b); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Summary struct {
			Sessions       int    `json:"sessions"`
			SessionsDiffer int    `json:"sessions_differ"`
			Requests       int    `json:"requests"`
			RequestsDiffer int    `json:"requests_differ"`
			Text           string `json:"text"`
			Repeated       []struct {
				Sessions []int64 `json:"sessions"`
				Request  string  `json:"request"`
			} `json:"repeated"`
		}
		Reports []struct {
			Requests []RequestDiff
			Counts   struct {
				Requests, Differ, Changes int
				Text                      string
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatalf("decode: %v\n%s", err, js.String())
	}
	if !strings.Contains(text.String(), "\n"+got.Summary.Text+"\n") || got.Summary.Text == "" {
		t.Errorf("JSON summary %q is not the text report's last line:\n%s", got.Summary.Text, text.String())
	}
	if s := got.Summary; s.Sessions != 2 || s.SessionsDiffer != 2 || s.RequestsDiffer != 5 || s.Requests != 9 {
		t.Errorf("JSON summary %+v; want 2 sessions, 2 differ, 5 of 9 requests", s)
	}
	if len(got.Reports) != 2 {
		t.Fatalf("%d reports; want 2", len(got.Reports))
	}
	for i, r := range got.Reports {
		if r.Counts.Text == "" || !strings.Contains(text.String(), "\n"+r.Counts.Text+"\n") {
			t.Errorf("report %d counts %q, which the text report does not say:\n%s", i, r.Counts.Text, text.String())
		}
	}
	if len(got.Summary.Repeated) != 3 {
		t.Errorf("JSON summary lists %d repeated differences; want 3 (as the text does)", len(got.Summary.Repeated))
	}
	for _, rep := range got.Summary.Repeated {
		if !slices.Equal(rep.Sessions, []int64{1, 3}) {
			t.Errorf("repeated %s in sessions %v; want [1 3]", rep.Request, rep.Sessions)
		}
	}
	for _, rd := range got.Reports[1].Requests {
		if rd.Method == "tools/list" && !slices.Equal(rd.RepeatedIn, []int64{1, 3}) {
			t.Errorf("tools/list of session 3: repeated_in %v; want [1 3]", rd.RepeatedIn)
		}
		if rd.Method == "prompts/get" && rd.RepeatedIn != nil {
			t.Errorf("prompts/get, in session 3 only: repeated_in %v", rd.RepeatedIn)
		}
	}
}
