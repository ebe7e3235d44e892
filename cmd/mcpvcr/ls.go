package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/view"
)

func lsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "ls",
		Usage: "list the sessions in a cassette",
		Flags: []cli.Flag{
			cassetteFlag(),
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text or json"},
		},
		Action: func(c *cli.Context) error {
			format := c.String("format")
			if format != "text" && format != "json" {
				return usageErr("--format text or --format json", "--format %q is not text or json", format)
			}
			db, err := openForRead(c)
			if err != nil {
				return err
			}
			defer db.Close()
			ss, err := db.Sessions(c.Context)
			if err != nil {
				return failErr(fmt.Errorf("list sessions: %w", err), "")
			}
			if format == "json" {
				return view.WriteSessionsJSON(e.stdout, ss)
			}
			if len(ss) == 0 {
				fmt.Fprintf(e.stderr, "cassette %s holds no sessions yet\n", cassettePath(c))
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tTRANSPORT\tREVISION\tERA\tSTARTED\tDURATION\tUPSTREAM")
			for _, s := range ss {
				dur := "open"
				if !s.EndedAt.IsZero() {
					dur = s.EndedAt.Sub(s.StartedAt).Round(time.Millisecond).String()
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, dash(s.Name), s.Transport, dash(s.Revision), dash(s.Era),
					s.StartedAt.UTC().Format(time.DateTime), dur, dash(s.Upstream))
			}
			return tw.Flush()
		},
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
