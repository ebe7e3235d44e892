package matrix

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// goProcessEnv, when set in the environment of this test binary, makes it
// the Go SDK client as a process of its own: it runs the job the variable
// holds (JSON) and prints what it saw as JSON on stdout.
const goProcessEnv = "MATRIX_GOSDK_CLIENT"

// A goJob is one run of the Go SDK client process.
type goJob struct {
	Transport string   `json:"transport"`
	Argv      []string `json:"argv,omitempty"`
	URL       string   `json:"url,omitempty"`
	Rev       string   `json:"rev,omitempty"`
	Plan      []step   `json:"plan"`
	Info      string   `json:"info"`
	Alt       bool     `json:"alt,omitempty"`
	Notes     int      `json:"notes,omitempty"`
}

// A goReport is what the Go SDK client process saw.
type goReport struct {
	Transcript Transcript `json:"transcript"`
	Stderr     string     `json:"stderr,omitempty"`
	Code       int        `json:"code"`
	Err        string     `json:"err,omitempty"`
}

// goProcessMain runs the Go SDK client process's job, if this process is
// one, and exits.
func goProcessMain() {
	spec := os.Getenv(goProcessEnv)
	if spec == "" {
		return
	}
	var j goJob
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", goProcessEnv, err)
		os.Exit(2)
	}
	r, err := goSession(endpoint{transport: j.Transport, argv: j.Argv, url: j.URL}, call{rev: j.Rev, plan: j.Plan, info: j.Info, alt: j.Alt, notes: j.Notes})
	rep := goReport{Transcript: r.t, Stderr: r.stderr, Code: r.code}
	if err != nil {
		rep.Err = err.Error()
	}
	json.NewEncoder(os.Stdout).Encode(rep)
	os.Exit(0)
}

// goProcessClient is the Go SDK client (v1.8.0) as a process of its own:
// this test binary, run again with goProcessEnv.
func goProcessClient(t *testing.T, ep endpoint, c call) run {
	t.Helper()
	spec, err := json.Marshal(goJob{Transport: ep.transport, Argv: ep.argv, URL: ep.url, Rev: c.rev, Plan: c.plan, Info: c.info, Alt: c.alt, Notes: c.notes})
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), goProcessEnv+"="+string(spec))
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the Go SDK client process: %v\n%s", err, stderr.String())
	}
	var rep goReport
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("the Go SDK client process printed %q: %v\n%s", stdout.String(), err, stderr.String())
	}
	if rep.Err != "" {
		t.Fatalf("the Go SDK client process: %s", rep.Err)
	}
	return run{t: rep.Transcript, stderr: rep.Stderr, code: rep.Code}
}
