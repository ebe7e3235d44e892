// Package view renders recorded sessions for people and other tools: a
// self-contained HTML page (WriteHTML) that a bug report can attach as
// one file, the terminal timeline of mcpvcr show, the table of mcpvcr ls
// (WriteSessions), the session as JSON (SessionJSON, which ls, show, the
// HAR export and the HTML page share), an HTTP Archive (WriteHAR) and
// go-vcr cassettes (EncodeGoVCR, v4's format and v2's).
//
// Export writes any of ExportFormats, the one list of export formats,
// from a cassette; the lossless JSONL text stays in store, which imports
// it too.
//
// The HTML page embeds the session as JSON and draws it with a little
// plain JavaScript: a timeline with one lane per stream, requests paired
// with their answers, each frame's exact bytes and pretty-printed JSON,
// search and filters. It needs no network and works from file://. Rows
// are drawn lazily, so that a session of many thousands of frames opens
// and scrolls smoothly.
//
// The formats live here, not in store, so that a program that records or
// replays (recorder, replayer, mcpvcrtest) links neither YAML nor go-vcr
// nor a template engine; the page also shows the differences of verify
// and diff, which store must not import, and the faults of a chaos
// replay run (ExportChaosHTML), which cmd hands over as plain data
// (Chaos) so that view does not import replayer.
package view
