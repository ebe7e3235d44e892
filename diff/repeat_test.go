package diff

import (
	"bytes"
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
