package replayer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpvcr/mcpvcr/store"
)

// TransportError reports a session recorded over a transport that the
// replay asked for does not serve (a stdio session for HTTP, say).
type TransportError struct {
	Session   int64
	Transport store.Transport
}

// Error names the session and its transport.
func (e *TransportError) Error() string {
	return fmt.Sprintf("session %d was recorded over %s", e.Session, e.Transport)
}

// Select returns the ids of the sessions of db that a replay over one of
// ts serves: session id, or when id is 0 every session recorded over one
// of ts (only their ids are read, for cassettes of many sessions). A
// missing session wraps store.ErrNotFound; one recorded over another
// transport is a *TransportError; a cassette with none over ts wraps
// ErrNoRecordings.
func Select(ctx context.Context, db *store.DB, id int64, ts ...store.Transport) ([]int64, error) {
	if id != 0 {
		s, err := db.Session(ctx, id)
		if err != nil {
			return nil, err // it names the session
		}
		if !slices.Contains(ts, s.Transport) {
			return nil, &TransportError{Session: id, Transport: s.Transport}
		}
		return []int64{id}, nil
	}
	ids, err := db.SessionIDs(ctx, ts...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	if len(ids) > 0 {
		return ids, nil
	}
	all, err := db.Sessions(ctx)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	e := &NoRecordingsError{Want: ts[0], Have: map[store.Transport]int{}}
	for _, s := range all {
		e.Have[s.Transport]++
	}
	return nil, e
}

// NoRecordingsError is Select's error for a cassette with no session over
// the transports asked for; it wraps ErrNoRecordings.
type NoRecordingsError struct {
	// Want is the transport asked for.
	Want store.Transport
	// Have counts the cassette's sessions by transport.
	Have map[store.Transport]int
}

// Error says what the cassette holds instead.
func (e *NoRecordingsError) Error() string {
	have := "it is empty"
	if len(e.Have) > 0 {
		ts := make([]store.Transport, 0, len(e.Have))
		for t := range e.Have {
			ts = append(ts, t)
		}
		slices.Sort(ts)
		parts := make([]string, len(ts))
		for i, t := range ts {
			parts[i] = fmt.Sprintf("%d %s", e.Have[t], t)
		}
		n := 0
		for _, c := range e.Have {
			n += c
		}
		word := "sessions"
		if n == 1 {
			word = "session"
		}
		have = "it holds " + strings.Join(parts, " and ") + " " + word
	}
	return fmt.Sprintf("%v: the cassette has no %s sessions: %s", ErrNoRecordings, e.Want, have)
}

// Unwrap returns ErrNoRecordings.
func (e *NoRecordingsError) Unwrap() error { return ErrNoRecordings }

// Load gives s sessions ids of db to replay under s.Match, as replay over
// their transport reads them best. Several sessions are read through a
// Source: the cassette's replay index under s.Match (built now if the
// cassette lacks it), loading only the candidates in play, so that start
// and memory do not grow with the cassette. Over HTTP that holds when the
// cassette's HTTP sessions are conversations only: no 2026-07-28
// exchanges, no sessions without a session id, no OAuth exchanges and no
// request refused at the HTTP level (each of those is answered from every
// session at once); else, and for a single session, they are read now as
// Recordings. With a Source, db must stay open while s serves.
func (s *Server) Load(ctx context.Context, db *store.DB, ids []int64) error {
	if len(ids) > 1 {
		first, err := db.Session(ctx, ids[0])
		if err != nil {
			return err
		}
		lazy := first.Transport == store.Stdio
		if !lazy {
			sum, err := db.SummarizeHTTP(ctx, refusedStatus...)
			if err != nil {
				return err
			}
			lazy = sum.Modern == 0 && sum.Anonymous == 0 && sum.Exchanges == 0 && sum.Answered == 0
		}
		if lazy {
			src, err := newSource(ctx, db, s.Logger, s.Match, ids...)
			s.Source = src
			return err
		}
	}
	recs, err := db.Recordings(ctx, ids...)
	s.Recordings = recs
	return err
}

// ErrBadOption means a Pace or a cut written by a person does not parse.
var ErrBadOption = errors.New("bad option")

// ParsePace reads a pace as people write it: "fast" (or "") is 0, as soon
// as due; "real" is 1, the recorded timing; a number is a factor.
func ParsePace(s string) (float64, error) {
	switch s {
	case "", "fast":
		return 0, nil
	case "real":
		return 1, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("%w: pace %q is not fast, real or a factor", ErrBadOption, s)
	}
	return f, nil
}

// ParseCut reads a Faults.CutAfter entry as people write it, "N:E": cut
// stream N (numbered from 1 in its session, as mcpvcr show numbers
// streams) after E events.
func ParseCut(spec string) (stream, events int, err error) {
	n, ev, ok := strings.Cut(spec, ":")
	sn, err1 := strconv.Atoi(n)
	en, err2 := strconv.Atoi(ev)
	if !ok || err1 != nil || err2 != nil || sn <= 0 || en <= 0 {
		return 0, 0, fmt.Errorf("%w: cut %q is not STREAM:EVENTS", ErrBadOption, spec)
	}
	return sn, en, nil
}
