package bytesize

import "testing"

func TestSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		str  string
	}{
		{"64MiB", 64 << 20, "64MiB"}, {"64 mib", 64 << 20, "64MiB"}, {"2KB", 2000, "2000"},
		{"1k", 1 << 10, "1KiB"}, {"1g", 1 << 30, "1024MiB"}, {"17", 17, "17"}, {"5b", 5, "5"},
	} {
		var s Size
		if err := s.Set(tt.in); err != nil || int64(s) != tt.want || s.String() != tt.str {
			t.Errorf("Set(%q) = %d %q, %v; want %d %q", tt.in, int64(s), s.String(), err, tt.want, tt.str)
		}
		if got := Of(&s); got != tt.want {
			t.Errorf("Of(%q) = %d; want %d", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "MiB", "1.5MiB", "2TiB", "1025GiB"} {
		var s Size
		if err := s.Set(bad); err == nil {
			t.Errorf("Set(%q) = %d; want an error", bad, int64(s))
		}
	}
	if got := Of("64"); got != 0 {
		t.Errorf("Of(string) = %d; want 0", got)
	}
}
