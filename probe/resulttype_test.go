package probe

import (
	"testing"
)

// TestUnknownResultType: a raw client that follows the nextCursor of an
// answer with an unknown resultType fails; one that lists again without
// it passes.
func TestUnknownResultType(t *testing.T) {
	recs := recorded(t, modern)
	for _, keep := range []bool{false, true} {
		res, report := replay(t, recs, []Kind{UnknownResultType}, func(url string) {
			c := newRaw(t, url, recs)
			c.start()
			_, m := c.send("tools/list", nil)
			if typ, _ := member(m["result"], "resultType"); string(typ) != `"`+unknownType+`"` {
				t.Errorf("the probed page %s has resultType %s; want %q", m["result"], typ, unknownType)
			}
			if keep {
				if _, m := c.send("tools/list", nil); containsCursor(string(m["result"]), `"`+typeCursor+`"`) {
					t.Errorf("the list asked for again was answered %s; want the recorded result", m["result"])
				}
			} else {
				c.send("tools/list", cursorEdit(typeCursor))
			}
			c.send("tools/call", nil)
		})
		r := one(t, res, report)
		if want := map[bool]Verdict{false: VerdictFail, true: VerdictPass}[keep]; r.Verdict != want {
			t.Errorf("keep=%v: verdict %s (%s); want %s", keep, r.Verdict, r.Did, want)
		}
	}
}
