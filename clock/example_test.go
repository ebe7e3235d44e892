package clock_test

import (
	"fmt"
	"time"

	"github.com/mcpvcr/mcpvcr/clock"
)

// A Fake clock moves only when told to: a timer fires once Advance has
// covered its duration.
func ExampleFake() {
	fake := clock.NewFake(time.Unix(0, 0).UTC())
	timer := fake.After(500 * time.Millisecond)
	fake.Advance(499 * time.Millisecond)
	select {
	case <-timer:
		fmt.Println("fired early")
	default:
		fmt.Println("waiting at", fake.Now().Format("15:04:05.000"))
	}
	fake.Advance(time.Millisecond)
	fmt.Println("fired at", (<-timer).Format("15:04:05.000"))
	// Output:
	// waiting at 00:00:00.499
	// fired at 00:00:00.500
}
