package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/cmd/mcpvcr/internal/suggest"
)

// flagUsageErr is the usage error of command cmd (such as "mcpvcr
// replay") for err: an unknown flag is named as it is typed in args (one
// dash or two), and the closest of flags is suggested.
func flagUsageErr(cmd string, flags []cli.Flag, args []string, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return usageErr(cmd+" --help", "%v", err)
	}
	typed := typedFlag(args, name)
	if best := closestFlag(name, flags); best != "" {
		return usageErr(cmd+" "+best+" … (mcpvcr "+strings.TrimPrefix(cmd, "mcpvcr ")+" --help lists every flag)", "unknown flag %s: did you mean %s?", typed, best)
	}
	return usageErr(cmd+" --help", "unknown flag %s", typed)
}

// closestFlag returns the flag of flags (as --name) closest to name, or
// "" (see suggest.Flag).
func closestFlag(name string, flags []cli.Flag) string {
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	return suggest.Flag(name, names)
}

// typedFlag returns flag name as args typed it, "-listn" or "--listn"
// (without an =value); where args do not hold it, with two dashes, one
// for a one-letter name.
func typedFlag(args []string, name string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		f, _, _ := strings.Cut(a, "=")
		if f == "-"+name || f == "--"+name {
			return f
		}
	}
	if len(name) > 1 {
		return "--" + name
	}
	return "-" + name
}
