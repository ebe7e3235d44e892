package upstream

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Probe sends the upstream one MCP POST (a ping, which no server
// acts on) before recording starts, and returns a warning when the answer
// says the URL is not an MCP endpoint: 404, 405 or an HTML page, unless
// a GET opens an event stream there (an HTTP+SSE endpoint). It returns
// "" when the answer looks like MCP's, or when the upstream cannot be
// asked (it may come up later). header is added to the requests; shown
// is how the warning names the upstream (its redacted URL).
func Probe(ctx context.Context, u *url.URL, header http.Header, shown string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, accept string, body string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, method, u.String(), strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		for k, vs := range header {
			req.Header[k] = vs
		}
		req.Header.Set("Accept", accept)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		return client.Do(req)
	}
	resp, err := do(http.MethodPost, "application/json, text/event-stream", `{"jsonrpc":"2.0","id":"mcpvcr-probe","method":"ping"}`)
	if err != nil {
		return ""
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	html := mt == "text/html"
	if !html && resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound {
		return ""
	}
	// A 2024-11-05 HTTP+SSE endpoint takes no POST where its stream is
	// (servers answer 404, 405 or an HTML error page): a GET opens the
	// event stream there, and then the URL is right.
	if g, err := do(http.MethodGet, "text/event-stream", ""); err == nil {
		gmt, _, _ := mime.ParseMediaType(g.Header.Get("Content-Type"))
		g.Body.Close() // an HTTP+SSE stream: it stays open until closed
		if g.StatusCode == http.StatusOK && gmt == "text/event-stream" {
			return ""
		}
	}
	if html {
		return fmt.Sprintf("%s answered an MCP POST with an HTML page (%s), not MCP: is the URL the server's MCP endpoint?", shown, resp.Status)
	}
	return fmt.Sprintf("%s answered an MCP POST with %s: is the path right? (MCP servers usually serve /mcp, HTTP+SSE ones /sse)", shown, resp.Status)
}
