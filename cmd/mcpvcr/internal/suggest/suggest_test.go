package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"replay", "replay", 0}, {"replya", "replay", 2}, {"rec", "record", 3}, {"", "ls", 2},
	} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d; want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestCommand(t *testing.T) {
	names := []string{"record", "replay", "ls", "verify"}
	for _, tt := range []struct{ name, want string }{
		{"rec", "record"}, {"replya", "replay"}, {"verfy", "verify"}, {"zzzzzz", ""},
	} {
		if got := Command(tt.name, names); got != tt.want {
			t.Errorf("Command(%q) = %q; want %q", tt.name, got, tt.want)
		}
	}
}

func TestFlag(t *testing.T) {
	names := []string{"cassette", "c", "max-frame", "pace"}
	for _, tt := range []struct{ name, want string }{
		{"casette", "--cassette"}, {"max", "--max-frame"}, {"ma", ""}, {"c", ""}, {"pase", "--pace"}, {"zzzzzz", ""},
	} {
		if got := Flag(tt.name, names); got != tt.want {
			t.Errorf("Flag(%q) = %q; want %q", tt.name, got, tt.want)
		}
	}
}
