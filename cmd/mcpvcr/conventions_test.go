package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// conventionCassette is a committed cassette the CLI tests read.
var conventionCassette = filepath.Join("..", "..", "cassettes", "gosdk-stdio-2025-06-18.jsonl")

// mcpvcrEnv runs the binary like mcpvcr, with env added to the
// environment.
func mcpvcrEnv(tb testing.TB, env []string, args ...string) result {
	tb.Helper()
	return runMcpvcr(tb, nil, env, args...)
}

// TestVersion: --version prints the module version and, when the build
// recorded one, the commit, as the binary's build info has them.
func TestVersion(t *testing.T) {
	parallel(t)
	r := mcpvcr(t, "", "--version")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "mcpvcr version ") {
		t.Fatalf("mcpvcr --version = %d, %q", r.code, r.stdout)
	}
	info, err := exec.Command("go", "version", "-m", mcpvcrBin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	mod := regexp.MustCompile(`(?m)^\tmod\t\S+\t(\S+)`).FindSubmatch(info)
	if mod == nil || !strings.Contains(r.stdout, string(mod[1])) {
		t.Errorf("mcpvcr --version = %q; want the module version of\n%s", r.stdout, info)
	}
	if rev := regexp.MustCompile(`vcs\.revision=(\S+)`).FindSubmatch(info); rev != nil && !strings.Contains(r.stdout, "commit "+string(rev[1])) {
		t.Errorf("mcpvcr --version = %q; want commit %s", r.stdout, rev[1])
	}
}

// TestVersion_NoShortFlag: -v is no top-level flag (it is show's
// --payload), so a lone -v is a usage error, not the version.
func TestVersion_NoShortFlag(t *testing.T) {
	parallel(t)
	if r := mcpvcr(t, "", "-v"); r.code != exitUsage || strings.Contains(r.stdout, "mcpvcr version") {
		t.Errorf("mcpvcr -v exited %d, printed %q; want a usage error", r.code, r.stdout)
	}
}

// TestVersion_MakeBuild: make build stamps the commit from git, also
// where GOFLAGS=-buildvcs=false keeps it out of the build information.
func TestVersion_MakeBuild(t *testing.T) {
	parallel(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	bin := t.TempDir()
	mk := exec.Command("make", "-C", filepath.Join("..", ".."), "build", "BIN="+bin)
	mk.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(bin, "mcpvcr"), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "commit " + strings.TrimSpace(string(head)); !strings.Contains(string(out), want) {
		t.Errorf("mcpvcr --version of make build = %q; want %q in it", out, want)
	}
}

// TestDemo_BuildsAsMakeAndEndsWithPATH: make demo builds mcpvcr as make
// build does (bin/mcpvcr, stamped), says how long each build took, and
// the last line it prints puts bin/ on PATH, as the README says.
func TestDemo_BuildsAsMakeAndEndsWithPATH(t *testing.T) {
	parallel(t)
	b, err := os.ReadFile(filepath.Join("..", "..", "scripts", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	demo := string(b)
	for _, want := range []string{"took make -s build", `echo "   ... took $((SECONDS - t0)) s"`} {
		if !strings.Contains(demo, want) {
			t.Errorf("scripts/demo.sh lacks %q", want)
		}
	}
	var last string
	for _, l := range strings.Split(demo, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			last = l
		}
	}
	if !strings.HasPrefix(last, "echo ") || !strings.Contains(last, `export PATH=\"$PWD/bin:`) {
		t.Errorf("the last line of scripts/demo.sh is %q; want the echo of export PATH=...bin", last)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "the last line puts it on PATH") {
		t.Errorf("README.md does not say that make demo's last line puts mcpvcr on PATH")
	}
}

// TestHelp: the top-level help and every command's help list the exit
// codes, and "help CMD" is "CMD --help".
func TestHelp(t *testing.T) {
	parallel(t)
	top := mcpvcr(t, "", "--help")
	if top.code != exitOK || !strings.Contains(top.stdout, "Exit status:") || !strings.Contains(top.stdout, "2  usage") {
		t.Errorf("mcpvcr --help = %d, lacks the exit codes:\n%s", top.code, top.stdout)
	}
	for _, cmd := range []string{"record", "replay", "ls", "show", "export", "import", "view", "verify", "diff", "check", "completion"} {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			flag := mcpvcr(t, "", cmd, "--help")
			help := mcpvcr(t, "", "help", cmd)
			if flag.code != exitOK || help.code != exitOK {
				t.Fatalf("mcpvcr %s --help = %d, mcpvcr help %[1]s = %d", cmd, flag.code, help.code)
			}
			if !strings.Contains(flag.stdout, "Exit status:") || !strings.Contains(flag.stdout, "3  any other failure") {
				t.Errorf("mcpvcr %s --help lacks the exit codes:\n%s", cmd, flag.stdout)
			}
			if _, desc, _ := strings.Cut(flag.stdout, "\nDESCRIPTION:\n"); strings.HasPrefix(strings.TrimSpace(desc), "Exit status:") || desc == "" {
				t.Errorf("mcpvcr %s --help has no description:\n%s", cmd, flag.stdout)
			}
			if help.stdout != flag.stdout {
				t.Errorf("mcpvcr help %s differs from mcpvcr %[1]s --help:\n%s\nwant:\n%s", cmd, help.stdout, flag.stdout)
			}
		})
	}
}

// TestUnknownCommand: a mistyped command is a usage error that suggests
// the command meant.
func TestUnknownCommand(t *testing.T) {
	parallel(t)
	tests := []struct{ arg, hint string }{
		{"lss", "try: mcpvcr ls\n"},
		{"verfy", "try: mcpvcr verify\n"},
		{"rep", "try: mcpvcr replay\n"}, // a prefix
		{"xyzzy", "try: mcpvcr --help"},
	}
	for _, tt := range tests {
		r := mcpvcr(t, "", "--cassette", "x.db", tt.arg)
		if r.code != exitUsage || !strings.Contains(r.stderr, `"`+tt.arg+`" is not an mcpvcr command`) || !strings.Contains(r.stderr, tt.hint) {
			t.Errorf("mcpvcr %s = %d, %q; want exit 2 and %q", tt.arg, r.code, r.stderr, tt.hint)
		}
	}
}

// TestCompletion: the bash script completes commands by asking mcpvcr,
// in a real bash.
func TestCompletion(t *testing.T) {
	parallel(t)
	words := mcpvcr(t, "", "--generate-bash-completion")
	if !strings.Contains(words.stdout, "record\n") || !strings.Contains(words.stdout, "verify\n") {
		t.Errorf("mcpvcr --generate-bash-completion = %q; want the commands", words.stdout)
	}
	script := mcpvcr(t, "", "completion", "bash")
	if script.code != exitOK || !strings.Contains(script.stdout, "complete -o bashdefault") {
		t.Fatalf("mcpvcr completion bash = %d, %q", script.code, script.stdout)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the script in")
	}
	path := filepath.Join(t.TempDir(), "mcpvcr.bash")
	if err := os.WriteFile(path, []byte(script.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bash, "-c", `source "$1"; COMP_WORDS=("$2" re); COMP_CWORD=1; _mcpvcr; echo "${COMPREPLY[@]}"`, "bash", path, mcpvcrBin).CombinedOutput()
	if got, want := strings.TrimSpace(string(out)), "record replay"; err != nil || got != want {
		t.Errorf("completing \"mcpvcr re\" = %q, %v; want %q", got, err, want)
	}
	if r := mcpvcr(t, "", "completion", "fish"); r.code != exitUsage {
		t.Errorf("mcpvcr completion fish = %d; want %d", r.code, exitUsage)
	}
}

// TestEnvVars: flags read MCPVCR_* when not given; a bad value from the
// environment is a usage error like a bad flag.
func TestEnvVars(t *testing.T) {
	parallel(t)
	tests := []struct {
		env  string
		args []string
		code int
		want string // in stderr
	}{
		{"MCPVCR_CASSETTE=" + conventionCassette, []string{"ls"}, exitOK, ""},
		{"MCPVCR_FORMAT=yaml", []string{"diff", "1", "2"}, exitUsage, `--format "yaml"`},
		{"MCPVCR_PACE=slow", []string{"replay", "--stdio"}, exitUsage, `--pace "slow"`},
		{"MCPVCR_UPSTREAM=ftp://x", []string{"verify", "1"}, exitUsage, `--upstream "ftp://x"`},
		{"MCPVCR_TIMEOUT=soon", []string{"verify", "1", "--", "true"}, exitUsage, "soon"},
		{"MCPVCR_LISTEN=127.0.0.1:bad", []string{"replay", "--cassette", filepath.Join("..", "..", "cassettes", "gosdk-http-2025-06-18.jsonl")}, exitFailure, "listen on 127.0.0.1:bad"},
	}
	for _, tt := range tests {
		r := mcpvcrEnv(t, []string{tt.env}, tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%s mcpvcr %s = %d, stderr %q; want %d and %q", tt.env, strings.Join(tt.args, " "), r.code, r.stderr, tt.code, tt.want)
		}
	}
}

// TestPositionalCassette: ls, show, export and check take the cassette
// as an argument too, and extra arguments are usage errors.
func TestPositionalCassette(t *testing.T) {
	parallel(t)
	c := conventionCassette
	tests := []struct {
		args []string
		code int
		want string // in stdout (exit 0) or stderr
	}{
		{[]string{"ls", c}, exitOK, "gosdk-stdio-2025-06-18"},
		{[]string{"show", "1", c}, exitOK, "session 1 gosdk-stdio-2025-06-18"},
		{[]string{"show", c, "1"}, exitOK, "session 1 gosdk-stdio-2025-06-18"},
		{[]string{"export", c, "1"}, exitOK, `{"type":"mcpvcr","version":1}`},
		{[]string{"check", c}, exitOK, "result: ok"},
		{[]string{"ls", c, "other.db"}, exitUsage, "ls takes one cassette"},
		{[]string{"ls", c, "1"}, exitUsage, "ls takes at most 0 SESSION"},
		{[]string{"show", "1", "2", c}, exitUsage, "show takes at most 1 SESSION"},
		{[]string{"check", c, c}, exitUsage, "check takes one cassette"},
		{[]string{"replay", "1", "2", "--stdio", "--cassette", c}, exitUsage, "replay takes at most 1 argument"},
		{[]string{"import", c, c}, exitUsage, "import takes one FILE"},
		{[]string{"diff", "1", "2", "3", "--cassette", c}, exitUsage, "diff takes two sessions"},
		{[]string{"record", "--upstream", "http://127.0.0.1:1/mcp", "extra"}, exitUsage, "not both"},
	}
	for _, tt := range tests {
		r := mcpvcr(t, "", tt.args...)
		out := r.stdout
		if tt.code != exitOK {
			out = r.stderr
		}
		if r.code != tt.code || !strings.Contains(out, tt.want) {
			t.Errorf("mcpvcr %s = %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d and %q", strings.Join(tt.args, " "), r.code, r.stdout, r.stderr, tt.code, tt.want)
		}
	}
}

// TestREADME_MakeTestTime: the README and docs/contributing.md give
// make test the same running time, and the README says who it is for and
// which package takes longest.
func TestREADME_MakeTestTime(t *testing.T) {
	parallel(t)
	took := regexp.MustCompile(`(\d+(?: to\s+\d+)?)\s+minutes\s+on\s+(?:2|two)\s+cores`)
	var times []string
	for _, page := range []string{"README.md", filepath.Join("docs", "contributing.md")} {
		b, err := os.ReadFile(filepath.Join("..", "..", page))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if page == "README.md" {
			for _, want := range []string{"for contributors", "`cmd/mcpvcr`", "scripts/testprogress"} {
				if !strings.Contains(text, want) {
					t.Errorf("README.md lacks %q near make test", want)
				}
			}
		}
		for _, m := range took.FindAllStringSubmatch(text, -1) {
			times = append(times, page+": "+strings.Join(strings.Fields(m[1]), " "))
			if got, first := strings.Join(strings.Fields(m[1]), " "), strings.SplitN(times[0], ": ", 2)[1]; got != first {
				t.Errorf("make test takes %q in %s but %q", got, page, times[0])
			}
		}
	}
	if len(times) == 0 {
		t.Errorf("neither README.md nor docs/contributing.md says how long make test takes")
	}
}
