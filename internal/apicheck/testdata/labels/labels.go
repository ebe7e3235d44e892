// Package labels defines session labels in every way apicheck looks at,
// and uses labels in the ways it allows.
package labels

import "context"

// Session has labels.
type Session struct{ Labels map[string]string }

type db struct{}

func (db) LabelValues(context.Context, string) []string { return nil }

// FooLabel is defined here rather than in store.
const FooLabel = "foo"

var labelBar = "bar"

func use(s *Session, d db, key string) {
	s.Labels["baz"] = labelBar
	labels := map[string]string{}
	labels["qux"] = "1"
	d.LabelValues(context.Background(), "quux")
	// Allowed: a label by name, and an empty default.
	s.Labels[key] = labels[FooLabel]
	var labelNone = ""
	_ = labelNone
}
