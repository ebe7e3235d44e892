// Package buildinfo says which build of mcpvcr is running, for --version.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Describe describes this build: the module version, the commit it was
// built from (marked when the tree had changes) and the Go release.
// stampVersion and stampCommit are what make build stamps (-ldflags -X),
// from git itself, used when the build information lacks them: a build
// with -buildvcs=false has no commit in it. stampCommit is a commit id,
// with a suffix after '-' when the tree had changes.
func Describe(stampVersion, stampCommit string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" && stampVersion != "" {
		v = stampVersion
	}
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" && stampCommit != "" {
		rev, modified, _ = strings.Cut(stampCommit, "-")
		if modified != "" {
			modified = "true"
		}
	}
	if rev != "" {
		v += " commit " + rev
		if modified == "true" {
			v += " (modified)"
		}
	}
	return v + " " + bi.GoVersion
}
