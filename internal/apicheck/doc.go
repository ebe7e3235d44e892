// Package apicheck holds the test that keeps mcpvcr's public API public:
// no exported identifier of a public package uses a type from internal/,
// so that a Go user can name, build and fake everything the API takes
// and returns.
package apicheck
