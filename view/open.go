package view

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

var (
	// ErrNoBrowser is Open's error when neither $BROWSER nor a system
	// opener is there.
	ErrNoBrowser = errors.New("no browser to open it with: neither $BROWSER nor a system opener (xdg-open, wslview, open) is there")
	// ErrOneSession is Export's error when a format that holds one
	// session (see OneSession) is given none or several.
	ErrOneSession = errors.New("the format holds exactly one session")
)

// openWait is how long Open waits for the opener to fail. Openers such
// as xdg-open hand the file to a browser and exit 0, or exit non-zero at
// once when they cannot; a browser given as $BROWSER may run on in the
// foreground, which Open takes as opened.
var openWait = 3 * time.Second

// Open opens the file at path in the user's browser: with browser, a
// $BROWSER value (the first of its colon-separated commands, split into
// words), or if browser is "" with the system's opener (open on macOS,
// xdg-open or wslview elsewhere, url.dll on Windows). It returns
// ErrNoBrowser when there is none, and an error naming the opener when
// it could not start or exited with a failure; the browser outlives the
// caller.
func Open(path, browser string) error {
	opener := browserCommand(browser)
	if len(opener) == 0 {
		return ErrNoBrowser
	}
	cmd := exec.Command(opener[0], append(opener[1:], path)...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", opener[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(openWait)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s: %w", strings.Join(opener, " "), err)
		}
		return nil
	case <-timer.C:
		return nil // still running: a browser in the foreground
	}
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
