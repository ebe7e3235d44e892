//go:build !linux

package store

// runLowered reports false: the writer keeps its normal priority where
// threads have no priority of their own that a process may lower.
func runLowered(fn func(tid int)) bool { return false }
