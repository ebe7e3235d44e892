// Package args reads what people write on the mcpvcr command line: a
// server command given as one string (SplitCommand), header lines
// (ParseHeaderLines), a replay's pace and stream cuts (ParsePace,
// ParseCut), and the sessions a replay serves (Select). Libraries take
// the parsed values; only cmd/mcpvcr (and tests) read these forms.
package args
