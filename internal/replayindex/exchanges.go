package replayindex

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpvcr/mcpvcr/store"
)

// Row is one row of the exchange index of HTTP replay: a recorded
// exchange, found by Kind and Key, in recorded order (Ord), with Info
// what a lookup compares besides the key.
type Row struct {
	Kind, Key, Info string
	Ord             int64
	Session, Stream int64
}

// Group counts the rows of one kind and key that share an Info.
type Group struct {
	Info  string
	Count int
}

// Exchanges is an exchange index, stored or held in memory. It is safe
// for concurrent use.
type Exchanges interface {
	// Groups returns, for the rows of kind and key, each distinct Info
	// and how many rows have it, in Info order.
	Groups(ctx context.Context, kind, key string) ([]Group, error)
	// At returns the n-th row (from 0, in recorded order) of kind and
	// key whose Info is one of infos (any Info when infos is empty), and
	// false when there are not that many.
	At(ctx context.Context, kind, key string, infos []string, n int) (Row, bool, error)
	// Kind returns the rows of kind in recorded order: for kinds of few
	// keys.
	Kind(ctx context.Context, kind string) ([]Row, error)
}

// MemExchanges returns an index of rows held in memory.
func MemExchanges(rows []Row) Exchanges {
	m := memExchanges{}
	for _, r := range rows {
		k := [2]string{r.Kind, r.Key}
		m[k] = append(m[k], r)
	}
	for _, rs := range m {
		slices.SortStableFunc(rs, func(a, b Row) int { return cmp.Compare(a.Ord, b.Ord) })
	}
	return m
}

// memExchanges holds the rows by kind and key, in recorded order.
type memExchanges map[[2]string][]Row

func (m memExchanges) Groups(_ context.Context, kind, key string) ([]Group, error) {
	return groups(m[[2]string{kind, key}]), nil
}

func groups(rows []Row) []Group {
	count := map[string]int{}
	for _, r := range rows {
		count[r.Info]++
	}
	var out []Group
	for info, n := range count {
		out = append(out, Group{Info: info, Count: n})
	}
	slices.SortFunc(out, func(a, b Group) int { return strings.Compare(a.Info, b.Info) })
	return out
}

func (m memExchanges) At(_ context.Context, kind, key string, infos []string, n int) (Row, bool, error) {
	for _, r := range m[[2]string{kind, key}] {
		if len(infos) > 0 && !slices.Contains(infos, r.Info) {
			continue
		}
		if n == 0 {
			return r, true, nil
		}
		n--
	}
	return Row{}, false, nil
}

func (m memExchanges) Kind(_ context.Context, kind string) ([]Row, error) {
	var out []Row
	for k, rs := range m {
		if k[0] == kind {
			out = append(out, rs...)
		}
	}
	slices.SortFunc(out, func(a, b Row) int { return cmp.Compare(a.Ord, b.Ord) })
	return out, nil
}

// PutExchanges stores rows as the exchange index name in cache table
// of c, replacing every index stored there before: a cassette keeps the
// one it was last replayed with.
//
// Under the name, the groups of each kind and key are stored as one
// value (key 'g', the kind, the key), and each row under its kind, key,
// the place of its Info among the groups and its Ord (key 'r'), so that
// the n-th row of one Info is read by its place.
func PutExchanges(ctx context.Context, c Cache, table, name string, rows []Row) error {
	byKey := MemExchanges(rows).(memExchanges)
	es := []store.CacheEntry{{Key: appendString(nil, name)}}
	for k, rs := range byKey {
		gs := groups(rs)
		v, err := json.Marshal(gs)
		if err != nil {
			return err
		}
		es = append(es, store.CacheEntry{Key: exchangeKey(name, 'g', k[0], k[1]), Value: v})
		for _, r := range rs {
			i, _ := slices.BinarySearchFunc(gs, r.Info, func(g Group, info string) int { return strings.Compare(g.Info, info) })
			key := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(exchangeKey(name, 'r', k[0], k[1]), uint32(i)), uint64(r.Ord))
			v := binary.AppendUvarint(binary.AppendUvarint(nil, uint64(r.Session)), uint64(r.Stream))
			es = append(es, store.CacheEntry{Key: key, Value: v})
		}
	}
	return c.CachePut(ctx, table, true, es)
}

// exchangeKey returns the key prefix of the entries of sort s ('g' or
// 'r') of kind and key under name.
func exchangeKey(name string, s byte, kind, key string) []byte {
	return appendString(appendString(append(appendString(nil, name), s), kind), key)
}

// OpenExchanges returns the exchange index name stored in cache table of
// c, and false when there is none.
func OpenExchanges(ctx context.Context, c Cache, table, name string) (Exchanges, bool, error) {
	_, ok, err := c.CacheGet(ctx, table, appendString(nil, name))
	if err != nil || !ok {
		return nil, false, err
	}
	return storedExchanges{c, table, name}, true, nil
}

type storedExchanges struct {
	c           Cache
	table, name string
}

func (x storedExchanges) Groups(ctx context.Context, kind, key string) ([]Group, error) {
	v, ok, err := x.c.CacheGet(ctx, x.table, exchangeKey(x.name, 'g', kind, key))
	if err != nil || !ok {
		return nil, err
	}
	var gs []Group
	if err := json.Unmarshal(v, &gs); err != nil {
		return nil, fmt.Errorf("replay exchange index %s: %w", x.name, err)
	}
	return gs, nil
}

func (x storedExchanges) At(ctx context.Context, kind, key string, infos []string, n int) (Row, bool, error) {
	gs, err := x.Groups(ctx, kind, key)
	if err != nil {
		return Row{}, false, err
	}
	prefix := exchangeKey(x.name, 'r', kind, key)
	var places []int
	for i, g := range gs {
		if len(infos) == 0 || slices.Contains(infos, g.Info) {
			places = append(places, i)
		}
	}
	// The first n+1 rows of each Info, the n-th of them all; of one Info,
	// its n-th row alone.
	var rows []Row
	for _, p := range places {
		offset, limit := 0, n+1
		if len(places) == 1 {
			offset, limit = n, 1
		}
		es, err := x.c.CacheRange(ctx, x.table, binary.BigEndian.AppendUint32(slices.Clip(prefix), uint32(p)), offset, limit)
		if err != nil {
			return Row{}, false, err
		}
		rs, err := x.rows(es, kind, key, gs)
		if err != nil {
			return Row{}, false, err
		}
		rows = append(rows, rs...)
	}
	slices.SortFunc(rows, func(a, b Row) int { return cmp.Compare(a.Ord, b.Ord) })
	if len(places) == 1 {
		n = 0
	}
	if n >= len(rows) {
		return Row{}, false, nil
	}
	return rows[n], true, nil
}

// rows decodes the row entries es of kind and key, whose groups are gs.
func (x storedExchanges) rows(es []store.CacheEntry, kind, key string, gs []Group) ([]Row, error) {
	prefix := len(exchangeKey(x.name, 'r', kind, key))
	out := make([]Row, 0, len(es))
	for _, e := range es {
		var sess, stream uint64
		if len(e.Key) != prefix+12 {
			return nil, fmt.Errorf("replay exchange index %s: a row key of %d bytes", x.name, len(e.Key))
		}
		place := int(binary.BigEndian.Uint32(e.Key[prefix:]))
		if _, ok := readUvarints(e.Value, &sess, &stream); !ok || place >= len(gs) {
			return nil, fmt.Errorf("replay exchange index %s: a row of %s %q is cut short", x.name, kind, key)
		}
		out = append(out, Row{Kind: kind, Key: key, Info: gs[place].Info, Ord: int64(binary.BigEndian.Uint64(e.Key[prefix+4:])),
			Session: int64(sess), Stream: int64(stream)})
	}
	return out, nil
}

func (x storedExchanges) Kind(ctx context.Context, kind string) ([]Row, error) {
	prefix := appendString(append(appendString(nil, x.name), 'g'), kind)
	es, err := x.c.CacheRange(ctx, x.table, prefix, 0, 0)
	if err != nil {
		return nil, err
	}
	var out []Row
	for _, e := range es {
		key, rest, ok := readString(e.Key[len(prefix):])
		if !ok || len(rest) != 0 {
			return nil, fmt.Errorf("replay exchange index %s: a bad key of kind %s", x.name, kind)
		}
		var gs []Group
		if err := json.Unmarshal(e.Value, &gs); err != nil {
			return nil, fmt.Errorf("replay exchange index %s: %w", x.name, err)
		}
		rs, err := x.c.CacheRange(ctx, x.table, exchangeKey(x.name, 'r', kind, key), 0, 0)
		if err != nil {
			return nil, err
		}
		rows, err := x.rows(rs, kind, key, gs)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	slices.SortFunc(out, func(a, b Row) int { return cmp.Compare(a.Ord, b.Ord) })
	return out, nil
}
