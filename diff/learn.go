package diff

import (
	"strconv"

	"github.com/mcpvcr/mcpvcr/store"
)

// Learn returns the noise of a server: every path whose value differs
// between a and b, two runs of the same server release verified against
// expected (the Diffy idea). Paths are scoped to the request of expected
// they belong to (#SEQ) or to the server's own traffic (server). A list
// whose length differs is ignored whole; a request answered in one run
// only is ignored whole (**).
func Learn(expected, a, b *store.Recording) Noise {
	ex, ax := converse(expected), converse(a)
	seqOf := map[int64]int64{} // seq in a -> seq in expected
	for i, j := range pair(ex.exchanges, ax.exchanges) {
		if j >= 0 {
			seqOf[ax.exchanges[j].seq] = ex.exchanges[i].seq
		}
	}
	var n Noise
	add := func(sc string, c *Change) {
		p := Path{Scope: sc, segs: []pathSeg{{Kind: segAnyDepth}}}
		if c != nil {
			q, err := ParsePath(c.Path)
			if err != nil {
				return
			}
			p.segs = q.segs
			if c.Kind != Changed && p.segs[len(p.segs)-1].Kind == segIndex && len(p.segs) > 1 {
				p.segs = p.segs[:len(p.segs)-1]
			}
		}
		n = n.With(Noise{Paths: []Path{p}})
	}
	r := compare(ax, converse(b), infoOf(a), infoOf(b), Noise{})
	for _, rd := range r.Requests {
		seq, ok := seqOf[rd.Seq]
		if !ok || !rd.Differs() {
			continue
		}
		sc := "#" + strconv.FormatInt(seq, 10)
		if rd.Status != StatusChanged {
			add(sc, nil)
			continue
		}
		for i := range rd.Changes {
			add(sc, &rd.Changes[i])
		}
	}
	if r.Server != nil {
		for i := range r.Server.Changes {
			add(serverScope, &r.Server.Changes[i])
		}
	}
	return n
}

// Rescope returns n with the #SEQ scopes of expected's requests moved to
// the matching requests of next, for when next becomes the expectation
// (verify --update). Paths of requests next lacks are dropped.
func (n Noise) Rescope(expected, next *store.Recording) Noise {
	ex, nx := converse(expected), converse(next)
	to := map[string]string{}
	for i, j := range pair(ex.exchanges, nx.exchanges) {
		if j >= 0 {
			to["#"+strconv.FormatInt(ex.exchanges[i].seq, 10)] = "#" + strconv.FormatInt(nx.exchanges[j].seq, 10)
		}
	}
	var out Noise
	for _, p := range n.Paths {
		if len(p.Scope) > 0 && p.Scope[0] == '#' {
			s, ok := to[p.Scope]
			if !ok {
				continue
			}
			p.Scope = s
		}
		out.Paths = append(out.Paths, p)
	}
	return out
}
