// Package rules holds the path syntax of mcpvcr's ignore rules (see
// PathSyntax): the paths of a noise mask that diff and verify ignore, and
// the match-ignore rules of replay. Package diff exports them as
// diff.Path; replayer parses the stored ones without importing diff.
package rules
