// Package localsite tells the requests of this machine's own clients
// from those of another site: a web page the user visits can reach a
// local listener by renaming its own site to 127.0.0.1 (DNS rebinding),
// and its requests then carry that site as Host or Origin. The recording
// proxy and replay refuse them by the same rule.
package localsite

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// Local reports whether hostport (a Host, or an Origin's host) names
// this machine: localhost, a loopback address, or the address r arrived
// on. An empty hostport (HTTP/1.0: no Host to judge) is local.
func Local(r *http.Request, hostport string) bool {
	if hostport == "" {
		return true
	}
	host := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		host = hh
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host) // no allocation: every request is looked at
	if err != nil {
		return false
	}
	if ip.Unmap().IsLoopback() {
		return true
	}
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if lhost, _, err := net.SplitHostPort(la.String()); err == nil {
			if lip, err := netip.ParseAddr(lhost); err == nil && lip.Unmap() == ip.Unmap() {
				return true
			}
		}
	}
	return false
}

// Foreign says what in r names another site, "Host h" or "Origin o", or
// "" when nothing does: a Host that is not Local, or an Origin whose host
// is not. allowHost and allowOrigin, when not nil, let a Host or an
// Origin through anyway. A request without Origin (not a browser's) is
// judged by its Host alone.
func Foreign(r *http.Request, allowHost, allowOrigin func(string) bool) string {
	if !Local(r, r.Host) && (allowHost == nil || !allowHost(r.Host)) {
		return "Host " + r.Host
	}
	if o := r.Header.Get("Origin"); o != "" && (allowOrigin == nil || !allowOrigin(o)) {
		u, err := url.Parse(o)
		if err != nil || u.Host == "" || !Local(r, u.Host) {
			return "Origin " + o
		}
	}
	return ""
}
