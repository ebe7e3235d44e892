// Package upstream checks, before recording starts, the upstream the
// user named: that it can be dialled (Reachable) and that it answers as
// an MCP endpoint does (Probe).
package upstream

import (
	"context"
	"net"
	"net/url"
	"time"
)

// reachTimeout bounds Reachable's dial.
const reachTimeout = 5 * time.Second

// Reachable dials the host of u once, so that a wrong upstream fails at
// start rather than on the client's first request.
func Reachable(ctx context.Context, u *url.URL) error {
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	d := net.Dialer{Timeout: reachTimeout}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return err
	}
	return conn.Close()
}
