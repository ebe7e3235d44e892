// Package view renders recorded sessions for people: a self-contained
// HTML page (WriteHTML) that a bug report can attach as one file, and the
// terminal timeline of mcpvcr show.
//
// The HTML page embeds the session as JSON and draws it with a little
// plain JavaScript: a timeline with one lane per stream, requests paired
// with their answers, each frame's exact bytes and pretty-printed JSON,
// search and filters. It needs no network and works from file://. Rows
// are drawn lazily, so that a session of many thousands of frames opens
// and scrolls smoothly.
//
// The page lives in its own package, not in store with the JSONL and HAR
// exports: it carries a template engine and its assets, and it shows the
// differences of verify and diff, whose package store must not import.
package view
