package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// hoistFlags lets flags follow positional arguments, as in
// "mcpvcr show 3 --cassette bug.db": urfave/cli stops reading flags at
// the first positional argument, so the command's flags are moved in
// front of its positional arguments. Everything after "--" is left alone,
// and so is everything from the server command of record on.
func hoistFlags(app *cli.App, args []string) []string {
	if len(args) < 2 || args[len(args)-1] == "--generate-bash-completion" {
		return args // completion wants its flag last, where it is
	}
	out := []string{args[0]}
	i := 1
	// Global flags, up to the command name.
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		out = append(out, args[i])
		if takesValue(app.Flags, args[i]) && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
		i++
	}
	if i >= len(args) {
		return out
	}
	cmd := app.Command(args[i])
	out = append(out, args[i])
	i++
	if cmd == nil {
		return append(out, args[i:]...)
	}
	var flags, positional []string
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flags = append(flags, a)
			if takesValue(cmd.Flags, a) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
			continue
		}
		if takesCommand[cmd.Name] {
			// The rest is the server's argv, unchanged, flags and all.
			break
		}
		positional = append(positional, a)
	}
	out = append(out, flags...)
	out = append(out, positional...)
	return append(out, args[i:]...)
}

// takesCommand are the commands whose first positional argument starts a
// command line of its own: nothing from there on is theirs.
var takesCommand = map[string]bool{"record": true}

// takesValue reports whether arg names a flag that takes a separate value
// ("--cassette x", not "--cassette=x" or a boolean flag).
func takesValue(flags []cli.Flag, arg string) bool {
	if strings.Contains(arg, "=") {
		return false
	}
	name := strings.TrimLeft(arg, "-")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			if bf, ok := f.(*cli.BoolFlag); ok && bf != nil {
				return false
			}
			if gf, ok := f.(*cli.GenericFlag); ok && gf != nil {
				if b, ok := gf.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
					return false // --allow-writes alone, or --allow-writes=TOOL
				}
			}
			return true
		}
	}
	return false
}
