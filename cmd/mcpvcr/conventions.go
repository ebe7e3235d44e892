package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/cmd/mcpvcr/internal/buildinfo"
	"github.com/mcpvcr/mcpvcr/cmd/mcpvcr/internal/suggest"
)

// stampVersion and stampCommit are set by make build (-ldflags -X), from
// git itself: a build with -buildvcs=false (GOFLAGS in some
// environments) has no commit in its build information.
var stampVersion, stampCommit string

// version describes this build (see buildinfo.Describe).
func version() string { return buildinfo.Describe(stampVersion, stampCommit) }

// exitCodes is the exit status section of a command's help; differ says
// what exit 1 means for it, "" when the command never exits 1.
func exitCodes(differ string) string {
	one := "   1  " + differ + "\n"
	if differ == "" {
		one = ""
	}
	return "Exit status:\n" +
		"   0  ok\n" + one +
		"   2  usage: a flag or argument is wrong\n" +
		"   3  any other failure (the cassette cannot be opened, the server cannot start, ...)"
}

// exitDiffers says what exit 1 means, per command.
var exitDiffers = map[string]string{
	"":       "differences found (verify, diff), unmatched traffic (replay), problems found (check)",
	"record": "stdio: mcpvcr exits with the server's own exit code instead",
	"replay": "the client sent frames that matched no recorded frame",
	"verify": "differences found, or the server went away mid-run",
	"diff":   "differences found",
	"check":  "problems found in the cassette (they are listed)",
}

// addExitCodes appends the exit status section to the help of the app
// and of every command.
func addExitCodes(app *cli.App) {
	app.Description += "\n\n" + exitCodes(exitDiffers[""])
	for _, c := range app.Commands {
		if c.Hidden {
			continue
		}
		if c.Description != "" {
			c.Description += "\n\n"
		}
		c.Description += exitCodes(exitDiffers[c.Name])
	}
}

// unknownCommand returns a usage error for args naming a command app does
// not have, with the closest command as the hint; nil otherwise.
func unknownCommand(app *cli.App, args []string) error {
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if takesValue(app.Flags, args[i]) {
			i++
		}
		i++
	}
	if i >= len(args) || app.Command(args[i]) != nil || args[i] == "help" || args[i] == "h" {
		return nil
	}
	name := args[i]
	hint := "mcpvcr --help to see the commands"
	if s := closestCommand(app, name); s != "" {
		hint = "mcpvcr " + s
	}
	return usageErr(hint, "%q is not an mcpvcr command", name)
}

// closestCommand returns the visible command of app closest to name, or
// "" (see suggest.Command).
func closestCommand(app *cli.App, name string) string {
	var names []string
	for _, c := range app.VisibleCommands() {
		names = append(names, c.Name)
	}
	return suggest.Command(name, names)
}

// bashCompletion is the script `mcpvcr completion bash` prints. It asks
// mcpvcr itself for the words (urfave/cli's --generate-bash-completion).
const bashCompletion = `# bash completion for mcpvcr. Install with one of:
#   source <(mcpvcr completion bash)                               # this shell
#   mcpvcr completion bash > ~/.local/share/bash-completion/completions/mcpvcr
_mcpvcr() {
	local cur="${COMP_WORDS[COMP_CWORD]}" words
	if [[ "$cur" == -* ]]; then
		words=$("${COMP_WORDS[0]}" "${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" --generate-bash-completion 2>/dev/null)
	else
		words=$("${COMP_WORDS[0]}" "${COMP_WORDS[@]:1:COMP_CWORD-1}" --generate-bash-completion 2>/dev/null)
	fi
	COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o bashdefault -o default -F _mcpvcr mcpvcr
`

func completionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script",
		ArgsUsage: "bash",
		Description: "Prints the bash completion script. Install it with\n" +
			"   source <(mcpvcr completion bash)\n" +
			"in ~/.bashrc, or save it as ~/.local/share/bash-completion/completions/mcpvcr.",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 || c.Args().First() != "bash" {
				return usageErr("mcpvcr completion bash", "completion takes one shell: bash")
			}
			_, err := fmt.Fprint(e.stdout, bashCompletion)
			return err
		},
	}
}

// positional reads the positional arguments of ls, show and export: at
// most one cassette path and up to maxSessions SESSION numbers, in any
// order. An argument that is a number is a SESSION; write a cassette
// named like a number as ./3. Any other argument is the cassette if it
// exists or looks like a path (has a dot or a slash). When none was
// given the path is the --cassette one; when one was, it becomes the
// --cassette of c, so that every message and hint names it.
func positional(c *cli.Context, maxSessions int) (path string, ids []int64, err error) {
	usage := "mcpvcr " + c.Command.Name + " " + c.Command.ArgsUsage
	for _, a := range c.Args().Slice() {
		if _, perr := strconv.ParseInt(a, 10, 64); perr == nil {
			n, err := sessionNumber(a)
			if err != nil {
				return "", nil, err
			}
			if len(ids) == maxSessions {
				return "", nil, usageErr(usage, "%s takes at most %d SESSION argument(s), got %q", c.Command.Name, maxSessions, a)
			}
			ids = append(ids, n)
			continue
		}
		if _, serr := os.Stat(a); serr != nil && !strings.ContainsAny(a, "./") {
			// Neither a file nor shaped like a path: a mistyped SESSION.
			return "", nil, usageErr("mcpvcr ls to see the sessions and their numbers", "%q is not a session number", a)
		}
		if path != "" {
			return "", nil, usageErr(usage, "%s takes one cassette, got %q and %q", c.Command.Name, path, a)
		}
		path = a
	}
	if path == "" {
		return cassettePath(c), ids, nil
	}
	if err := c.Set("cassette", path); err != nil {
		return "", nil, err
	}
	return path, ids, nil
}

// noArgs fails when the command got positional arguments it does not take.
func noArgs(c *cli.Context, max int) error {
	if c.NArg() > max {
		return usageErr("mcpvcr "+c.Command.Name+" --help", "%s takes at most %d argument(s), got %q", c.Command.Name, max, c.Args().Slice())
	}
	return nil
}
