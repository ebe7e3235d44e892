package view

import (
	"os/exec"
	"runtime"
	"strings"
)

// Open opens the file at path in the user's browser without waiting for
// it: with browser, a $BROWSER value (the first of its colon-separated
// commands, split into words), or if browser is "" with the system's
// opener (open on macOS, xdg-open or wslview elsewhere, url.dll on
// Windows). It reports whether a browser was started; the browser
// outlives the caller.
func Open(path, browser string) bool {
	opener := browserCommand(browser)
	if len(opener) == 0 {
		return false
	}
	cmd := exec.Command(opener[0], append(opener[1:], path)...)
	if err := cmd.Start(); err != nil {
		return false
	}
	cmd.Process.Release() // the browser outlives us
	return true
}

// browserCommand returns the command that opens a file in the user's
// browser: env ($BROWSER), else the system's opener; nil if there is none.
func browserCommand(env string) []string {
	if env != "" {
		return strings.Fields(strings.Split(env, ":")[0])
	}
	var cands [][]string
	switch runtime.GOOS {
	case "darwin":
		cands = [][]string{{"open"}}
	case "windows":
		cands = [][]string{{"rundll32", "url.dll,FileProtocolHandler"}}
	default:
		cands = [][]string{{"xdg-open"}, {"wslview"}}
	}
	for _, c := range cands {
		if _, err := exec.LookPath(c[0]); err == nil {
			return c
		}
	}
	return nil
}
