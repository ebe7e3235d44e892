package replayer

import (
	"context"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/storetest"
)

// BenchmarkNewEngine measures what a live session's engine costs: a
// sessionless HTTP client gets one per POST. go test -bench NewEngine
// -benchmem ./replayer
func BenchmarkNewEngine(b *testing.B) {
	db, ids := storetest.Import(b, manySessions(1))
	recs, err := load(context.Background(), db, ids...)
	if err != nil {
		b.Fatal(err)
	}
	rec := recs[0]
	rec.template(Match{}) // built once, as the first live session does
	b.ReportAllocs()
	for b.Loop() {
		newEngine(rec, Match{})
	}
}
