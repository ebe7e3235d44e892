package sse

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp/cmpopts"
)

// eventOpts compares events by content: a nil slice equals an empty one,
// since HasData, not Data's nil-ness, says whether there was data.
var eventOpts = cmpopts.EquateEmpty()

// whatwg splits and parses stream the slow, obvious way, one byte at a time,
// following the WHATWG "interpret an event stream" steps. It shares no code
// with the package, so tests and FuzzReader use it as the reference.
func whatwg(stream []byte) []Event {
	var (
		events  []Event
		start   int      // offset of the current block
		lines   [][]byte // complete lines of the current block
		line    []byte   // the current line so far
		hasBOM  = bytes.HasPrefix(stream, []byte("\uFEFF"))
		inBlock bool // bytes of the current block have been seen
	)
	i := 0
	if hasBOM {
		i, inBlock = 3, true
	}
	for i < len(stream) {
		inBlock = true
		c := stream[i]
		i++
		if c != '\r' && c != '\n' {
			line = append(line, c)
			continue
		}
		if c == '\r' && i < len(stream) && stream[i] == '\n' {
			i++
		}
		if len(line) > 0 {
			lines = append(lines, line)
			line = nil
			continue
		}
		events = append(events, whatwgBlock(stream[start:i], lines, start == 0 && hasBOM))
		start, lines, inBlock = i, nil, false
	}
	if inBlock {
		if len(line) > 0 {
			lines = append(lines, line)
		}
		e := whatwgBlock(stream[start:], lines, start == 0 && hasBOM)
		e.Partial = true
		events = append(events, e)
	}
	return events
}

var digits = regexp.MustCompile(`^[0-9]+$`)

// whatwgBlock makes the event for a block of lines.
func whatwgBlock(raw []byte, lines [][]byte, hasBOM bool) Event {
	e := Event{Raw: raw, Retry: -1, Comment: true, BOM: hasBOM}
	var data []string
	for _, l := range lines {
		s := string(l)
		if c, ok := strings.CutPrefix(s, ":"); ok {
			e.Comments = append(e.Comments, []byte(c))
			continue
		}
		e.Comment = false
		name, value, ok := strings.Cut(s, ":")
		if ok {
			value = strings.TrimPrefix(value, " ")
		}
		switch name {
		case "data":
			data = append(data, value)
			e.HasData = true
		case "id":
			if !strings.Contains(value, "\x00") {
				e.ID, e.HasID = value, true
			}
		case "event":
			e.Type = value
		case "retry":
			if n, err := strconv.Atoi(value); err == nil && digits.MatchString(value) {
				e.Retry = n
			}
		}
	}
	if e.HasData {
		e.Data = []byte(strings.Join(data, "\n"))
	}
	return e
}

// b returns s as bytes, to keep tables short.
func b(s string) []byte { return []byte(s) }

// bs returns each of ss as bytes.
func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// grammarTests holds streams and the events they must give, one rule of the
// grammar each. Several tests and FuzzReader's seeds use them.
var grammarTests = []struct {
	name   string
	stream string
	want   []Event
}{
	{name: "Empty", stream: "", want: nil},
	{
		name:   "DataLF",
		stream: "data: hello\n\n",
		want:   []Event{{Raw: b("data: hello\n\n"), Data: b("hello"), HasData: true, Retry: -1}},
	},
	{
		name:   "DataCRLF",
		stream: "data: hello\r\n\r\n",
		want:   []Event{{Raw: b("data: hello\r\n\r\n"), Data: b("hello"), HasData: true, Retry: -1}},
	},
	{
		name:   "DataCR",
		stream: "data: hello\r\rdata: again\r\r",
		want: []Event{
			{Raw: b("data: hello\r\r"), Data: b("hello"), HasData: true, Retry: -1},
			{Raw: b("data: again\r\r"), Data: b("again"), HasData: true, Retry: -1},
		},
	},
	{
		name:   "MixedLineEndings",
		stream: "data: a\r\ndata: b\rdata: c\n\r\n",
		want:   []Event{{Raw: b("data: a\r\ndata: b\rdata: c\n\r\n"), Data: b("a\nb\nc"), HasData: true, Retry: -1}},
	},
	{
		name:   "NoSpaceAfterColon",
		stream: "data:hello\n\n",
		want:   []Event{{Raw: b("data:hello\n\n"), Data: b("hello"), HasData: true, Retry: -1}},
	},
	{
		name:   "OnlyOneSpaceStripped",
		stream: "data:  hello \n\n",
		want:   []Event{{Raw: b("data:  hello \n\n"), Data: b(" hello "), HasData: true, Retry: -1}},
	},
	{
		name:   "TabNotStripped",
		stream: "data:\thello\n\n",
		want:   []Event{{Raw: b("data:\thello\n\n"), Data: b("\thello"), HasData: true, Retry: -1}},
	},
	{
		name:   "ColonInValue",
		stream: "data: a: b\n\n",
		want:   []Event{{Raw: b("data: a: b\n\n"), Data: b("a: b"), HasData: true, Retry: -1}},
	},
	{
		name:   "DataLinesJoined",
		stream: "data: a\ndata:\ndata: c\n\n",
		want:   []Event{{Raw: b("data: a\ndata:\ndata: c\n\n"), Data: b("a\n\nc"), HasData: true, Retry: -1}},
	},
	{
		name:   "TrailingEmptyDataLine",
		stream: "data: a\ndata\n\n",
		want:   []Event{{Raw: b("data: a\ndata\n\n"), Data: b("a\n"), HasData: true, Retry: -1}},
	},
	{
		name:   "DataWithoutColon",
		stream: "data\n\n",
		want:   []Event{{Raw: b("data\n\n"), Data: b(""), HasData: true, Retry: -1}},
	},
	{
		name:   "DataKeepsNUL",
		stream: "data: a\x00b\n\n",
		want:   []Event{{Raw: b("data: a\x00b\n\n"), Data: b("a\x00b"), HasData: true, Retry: -1}},
	},
	{
		name:   "PrimingEventWithSpace",
		stream: "id: 0\ndata: \n\n",
		want:   []Event{{Raw: b("id: 0\ndata: \n\n"), ID: "0", HasID: true, Data: b(""), HasData: true, Retry: -1}},
	},
	{
		name:   "PrimingEventWithoutSpace",
		stream: "id: 0\ndata:\n\n",
		want:   []Event{{Raw: b("id: 0\ndata:\n\n"), ID: "0", HasID: true, Data: b(""), HasData: true, Retry: -1}},
	},
	{
		name:   "PrimingEventWithRetry",
		stream: "id: p0\nretry: 500\ndata: \n\n",
		want:   []Event{{Raw: b("id: p0\nretry: 500\ndata: \n\n"), ID: "p0", HasID: true, Data: b(""), HasData: true, Retry: 500}},
	},
	{
		name:   "IDOnly",
		stream: "id: 7\n\n",
		want:   []Event{{Raw: b("id: 7\n\n"), ID: "7", HasID: true, Retry: -1}},
	},
	{
		name:   "IDWithNULIgnored",
		stream: "id: a\x00b\ndata: x\n\n",
		want:   []Event{{Raw: b("id: a\x00b\ndata: x\n\n"), Data: b("x"), HasData: true, Retry: -1}},
	},
	{
		name:   "IDWithNULKeepsEarlierID",
		stream: "id: 1\nid: \x00\n\n",
		want:   []Event{{Raw: b("id: 1\nid: \x00\n\n"), ID: "1", HasID: true, Retry: -1}},
	},
	{
		name:   "IDEmptyResets",
		stream: "id\ndata: x\n\n",
		want:   []Event{{Raw: b("id\ndata: x\n\n"), HasID: true, Data: b("x"), HasData: true, Retry: -1}},
	},
	{
		name:   "IDLastWins",
		stream: "id: 1\nid: 2\n\n",
		want:   []Event{{Raw: b("id: 1\nid: 2\n\n"), ID: "2", HasID: true, Retry: -1}},
	},
	{
		name:   "IDNotUTF8Kept",
		stream: "id: \xff\n\n",
		want:   []Event{{Raw: b("id: \xff\n\n"), ID: "\xff", HasID: true, Retry: -1}},
	},
	{
		name:   "EventType",
		stream: "event: endpoint\ndata: /messages?sessionId=1\n\n",
		want: []Event{{
			Raw:  b("event: endpoint\ndata: /messages?sessionId=1\n\n"),
			Type: "endpoint", Data: b("/messages?sessionId=1"), HasData: true, Retry: -1,
		}},
	},
	{
		name:   "EventTypeLastWins",
		stream: "event: a\nevent: custom\n\n",
		want:   []Event{{Raw: b("event: a\nevent: custom\n\n"), Type: "custom", Retry: -1}},
	},
	{
		name:   "EventTypeEmpty",
		stream: "event: message\nevent:\ndata: x\n\n",
		want:   []Event{{Raw: b("event: message\nevent:\ndata: x\n\n"), Data: b("x"), HasData: true, Retry: -1}},
	},
	{
		name:   "Retry",
		stream: "retry: 500\n\n",
		want:   []Event{{Raw: b("retry: 500\n\n"), Retry: 500}},
	},
	{
		name:   "RetryZero",
		stream: "retry:0\n\n",
		want:   []Event{{Raw: b("retry:0\n\n"), Retry: 0}},
	},
	{
		name:   "RetryInvalidIgnored",
		stream: "retry: 5s\nretry: -5\nretry: +5\nretry:\nretry:  5\nretry: 99999999999999999999999\n\n",
		want:   []Event{{Raw: b("retry: 5s\nretry: -5\nretry: +5\nretry:\nretry:  5\nretry: 99999999999999999999999\n\n"), Retry: -1}},
	},
	{
		name:   "RetryLastValidWins",
		stream: "retry: 10\nretry: x\n\nretry: 10\nretry: 20\n\n",
		want: []Event{
			{Raw: b("retry: 10\nretry: x\n\n"), Retry: 10},
			{Raw: b("retry: 10\nretry: 20\n\n"), Retry: 20},
		},
	},
	{
		name:   "UnknownFieldIgnored",
		stream: "foo: bar\ndata: x\n\nfoo\n\n",
		want: []Event{
			{Raw: b("foo: bar\ndata: x\n\n"), Data: b("x"), HasData: true, Retry: -1},
			{Raw: b("foo\n\n"), Retry: -1},
		},
	},
	{
		name:   "FieldNamesCaseSensitive",
		stream: "Data: x\nID: 1\nEvent: e\nRetry: 1\n\n",
		want:   []Event{{Raw: b("Data: x\nID: 1\nEvent: e\nRetry: 1\n\n"), Retry: -1}},
	},
	{
		name:   "FieldsInterleaved",
		stream: "data: a\nid: 1\ndata: b\nevent: e\n\n",
		want: []Event{{
			Raw: b("data: a\nid: 1\ndata: b\nevent: e\n\n"),
			ID:  "1", HasID: true, Type: "e", Data: b("a\nb"), HasData: true, Retry: -1,
		}},
	},
	{
		name:   "CommentOnly",
		stream: ": ping\n\n",
		want:   []Event{{Raw: b(": ping\n\n"), Retry: -1, Comments: bs(" ping"), Comment: true}},
	},
	{
		name:   "CommentEmptyAndMany",
		stream: ":\n:a\r\n\r\n",
		want:   []Event{{Raw: b(":\n:a\r\n\r\n"), Retry: -1, Comments: bs("", "a"), Comment: true}},
	},
	{
		name:   "CommentsAndFields",
		stream: ": hi\ndata: x\n:bye\n\n",
		want:   []Event{{Raw: b(": hi\ndata: x\n:bye\n\n"), Data: b("x"), HasData: true, Retry: -1, Comments: bs(" hi", "bye")}},
	},
	{
		name:   "StrayBlankLines",
		stream: "\ndata: x\n\n\n\r\n\r",
		want: []Event{
			{Raw: b("\n"), Retry: -1, Comment: true},
			{Raw: b("data: x\n\n"), Data: b("x"), HasData: true, Retry: -1},
			{Raw: b("\n"), Retry: -1, Comment: true},
			{Raw: b("\r\n"), Retry: -1, Comment: true},
			{Raw: b("\r"), Retry: -1, Comment: true},
		},
	},
	{
		name:   "BOM",
		stream: "\uFEFFdata: x\n\n",
		want:   []Event{{Raw: b("\uFEFFdata: x\n\n"), Data: b("x"), HasData: true, Retry: -1, BOM: true}},
	},
	{
		name:   "BOMThenBlankLine",
		stream: "\uFEFF\r\ndata: x\n\n",
		want: []Event{
			{Raw: b("\uFEFF\r\n"), Retry: -1, Comment: true, BOM: true},
			{Raw: b("data: x\n\n"), Data: b("x"), HasData: true, Retry: -1},
		},
	},
	{
		name:   "BOMOnlyOnce",
		stream: "\uFEFF\uFEFFdata: x\n\n",
		want:   []Event{{Raw: b("\uFEFF\uFEFFdata: x\n\n"), Retry: -1, BOM: true}},
	},
	{
		name:   "BOMOnlyAtStart",
		stream: "data: a\n\n\uFEFFdata: b\n\n",
		want: []Event{
			{Raw: b("data: a\n\n"), Data: b("a"), HasData: true, Retry: -1},
			{Raw: b("\uFEFFdata: b\n\n"), Retry: -1},
		},
	},
	{
		name:   "HalfBOM",
		stream: "\xEF\xBB\n\n",
		want:   []Event{{Raw: b("\xEF\xBB\n\n"), Retry: -1}},
	},
	{
		name:   "OnlyBOM",
		stream: "\uFEFF",
		want:   []Event{{Raw: b("\uFEFF"), Retry: -1, Comment: true, Partial: true, BOM: true}},
	},
	{
		name:   "PartialLine",
		stream: "data: a\n\ndata: b",
		want: []Event{
			{Raw: b("data: a\n\n"), Data: b("a"), HasData: true, Retry: -1},
			{Raw: b("data: b"), Data: b("b"), HasData: true, Retry: -1, Partial: true},
		},
	},
	{
		name:   "PartialBlock",
		stream: "id: 3\ndata: a\r\n",
		want:   []Event{{Raw: b("id: 3\ndata: a\r\n"), ID: "3", HasID: true, Data: b("a"), HasData: true, Retry: -1, Partial: true}},
	},
	{
		name:   "PartialCR",
		stream: "data: a\r",
		want:   []Event{{Raw: b("data: a\r"), Data: b("a"), HasData: true, Retry: -1, Partial: true}},
	},
	{
		name:   "PartialComment",
		stream: ": keep",
		want:   []Event{{Raw: b(": keep"), Retry: -1, Comments: bs(" keep"), Comment: true, Partial: true}},
	},
	{
		name:   "FinalCRNotPartial",
		stream: "data: a\r\r",
		want:   []Event{{Raw: b("data: a\r\r"), Data: b("a"), HasData: true, Retry: -1}},
	},
	{
		name:   "CRThenCRLF",
		stream: "data: a\r\r\ndata: b\r\n\r\n",
		want: []Event{
			{Raw: b("data: a\r\r\n"), Data: b("a"), HasData: true, Retry: -1},
			{Raw: b("data: b\r\n\r\n"), Data: b("b"), HasData: true, Retry: -1},
		},
	},
	{
		name: "MCPResponse",
		stream: "event: message\r\nid: s1-e2\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n" +
			": keep-alive\r\n\r\n",
		want: []Event{
			{
				Raw:  b("event: message\r\nid: s1-e2\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\r\n"),
				Type: "message", ID: "s1-e2", HasID: true, Data: b(`{"jsonrpc":"2.0","id":1,"result":{}}`), HasData: true, Retry: -1,
			},
			{Raw: b(": keep-alive\r\n\r\n"), Retry: -1, Comments: bs(" keep-alive"), Comment: true},
		},
	},
}
