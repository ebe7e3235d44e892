package localsite

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestForeign(t *testing.T) {
	arrived := &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 8080}
	allowed := func(s string) bool { return s == "https://app.example" || s == "app.example" }
	for _, tt := range []struct {
		host, origin string
		allow        bool
		want         string
	}{
		{host: "127.0.0.1:8080", want: ""},
		{host: "localhost:8080", origin: "http://localhost:3000", want: ""},
		{host: "[::1]:8080", origin: "http://[::1]:3000", want: ""},
		{host: "192.0.2.7:8080", origin: "http://192.0.2.7:8080", want: ""}, // the address it arrived on
		{host: "", want: ""}, // HTTP/1.0
		{host: "evil.example", want: "Host evil.example"},
		{host: "127.0.0.1:8080", origin: "http://evil.example", want: "Origin http://evil.example"},
		{host: "127.0.0.1:8080", origin: "null", want: "Origin null"},
		{host: "evil.example", origin: "http://evil.example", want: "Host evil.example"},
		{host: "app.example", origin: "https://app.example", allow: true, want: ""},
		{host: "app.example", origin: "https://app.example", want: "Host app.example"},
		{host: "127.0.0.1:8080", origin: "https://app.example", want: "Origin https://app.example"},
	} {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Host = tt.host
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(arrived)))
		var got string
		if tt.allow {
			got = Foreign(r, allowed, allowed)
		} else {
			got = Foreign(r, nil, nil)
		}
		if got != tt.want {
			t.Errorf("Host %q Origin %q (allow %v): Foreign = %q, want %q", tt.host, tt.origin, tt.allow, got, tt.want)
		}
	}
}
