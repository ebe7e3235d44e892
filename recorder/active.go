package recorder

import "sync/atomic"

// activity is one exchange counted in HTTP.Active.
type activity struct {
	h    *HTTP
	done atomic.Bool
}

// end stops counting the exchange, once; a nil activity does nothing.
// The end of an answer's body ends it before its last bytes go to the
// client, so that the client's next request, which can only follow them,
// never finds this one still counted.
func (a *activity) end() {
	if a != nil && a.done.CompareAndSwap(false, true) {
		a.h.Active(int(a.h.active.Add(-1)))
	}
}
