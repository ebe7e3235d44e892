package args

import (
	"errors"
	"testing"
)

func TestParsePace(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{{"", 0, true}, {"fast", 0, true}, {"real", 1, true}, {"0.5", 0.5, true}, {"slow", 0, false}, {"-1", 0, false}}
	for _, tt := range tests {
		got, err := ParsePace(tt.in)
		if got != tt.want || (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrBadOption)) {
			t.Errorf("ParsePace(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseCut(t *testing.T) {
	tests := []struct {
		in             string
		stream, events int
		ok             bool
	}{{"3:2", 3, 2, true}, {"3", 0, 0, false}, {"0:2", 0, 0, false}, {"a:b", 0, 0, false}, {"3:-1", 0, 0, false}}
	for _, tt := range tests {
		s, e, err := ParseCut(tt.in)
		if s != tt.stream || e != tt.events || (err == nil) != tt.ok {
			t.Errorf("ParseCut(%q) = %d, %d, %v; want %d, %d, ok %v", tt.in, s, e, err, tt.stream, tt.events, tt.ok)
		}
	}
}
