// Package apicheck holds the tests of mcpvcr's design rules. The public
// API stays public: no exported identifier of a public package uses a
// type from internal/ (an exported alias names one for users), so that a
// Go user can name, build and fake everything the API takes and returns.
// Imports point one way; the libraries link no export format and the
// binary no MCP SDK. No product function is over a cyclomatic complexity
// of 40, (*replayer.Server).ServeHTTP stays under 15 (each with the known
// exceptions of the day, a list that only shrinks), and every session
// label is defined in store/labels.go. Each rule has a twin test that
// shows it can fail.
package apicheck
