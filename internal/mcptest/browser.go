package mcptest

import (
	"os"
	"os/exec"
	"testing"
)

// BrowserEnv names the environment variable that points the browser tests
// at a Chromium or Chrome binary; without it they look for chromium,
// chromium-browser, google-chrome and google-chrome-stable on PATH.
const BrowserEnv = "MCPVCR_CHROMIUM"

// Chromium returns the path of a Chromium (or Chrome) binary for the
// tests that load the HTML report in a real browser. It skips the test
// when there is none, or fails it if [RequirePeers]: .ci/run installs
// Debian's chromium package.
func Chromium(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv(BrowserEnv); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium on PATH (apt-get install chromium, or set " + BrowserEnv + ")"
	if RequirePeers() {
		tb.Fatalf("%s; %s=1 makes it a failure", msg, RequirePeersEnv)
	}
	tb.Skip(msg)
	return ""
}
