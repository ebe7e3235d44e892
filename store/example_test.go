package store_test

import (
	"context"
	"fmt"
	"log"
	"path/filepath"

	"github.com/mcpvcr/mcpvcr/store"
)

// Load the recordings of a JSONL export (or a .db cassette) and read the
// first client frames of its session.
func ExampleLoadFile() {
	ctx := context.Background()
	recs, err := store.LoadFile(ctx, filepath.Join("..", "cassettes", "gosdk-stdio-2025-06-18.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	rec := recs[0]
	fmt.Println(rec.Session.Name, rec.Session.Transport, rec.Session.Revision, rec.Session.Era)
	for _, f := range rec.ProtocolFrames()[:3] {
		fmt.Printf("%d %s %s id=%q method=%q\n", f.Seq, f.Direction, f.Kind, f.ID, f.Method)
	}
	// Output:
	// gosdk-stdio-2025-06-18 stdio 2025-06-18 legacy
	// 1 c2s request id="1" method="initialize"
	// 2 s2c result id="1" method=""
	// 3 c2s notification id="" method="notifications/initialized"
}
