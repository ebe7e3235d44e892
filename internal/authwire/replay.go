package authwire

import (
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// What replay serves of the OAuth dance beside MCP (Handler finds the
// recorded exchange; this is how it is keyed and answered).

// exchangeIgnored are the parameters whose values differ from run to run
// and are not compared.
var exchangeIgnored = map[string]bool{
	"state": true, "code_challenge": true, "code_verifier": true, "code": true,
	"resource": true, "redirect_uri": true, "client_secret": true, "nonce": true,
}

// ExchangeKey is what identifies a plain HTTP exchange for replay's
// matching: method, path and the query and form parameters whose values
// are stable across runs (state, PKCE values, codes, secrets, the
// resource URL and the redirect URI are not; a redacted value equals any
// other; scope is a set). JSON bodies (registration metadata) are not
// compared.
func ExchangeKey(method, path, rawQuery, contentType string, body []byte) string {
	params := formParams(rawQuery)
	if mt, _, _ := mime.ParseMediaType(contentType); mt == "application/x-www-form-urlencoded" {
		params = append(params, formParams(string(body))...)
	}
	sort.Strings(params)
	return method + " " + path + "?" + strings.Join(params, "&")
}

func formParams(raw string) []string {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil
	}
	var ps []string
	for k, vs := range q {
		if exchangeIgnored[k] {
			continue
		}
		for _, v := range vs {
			if strings.HasPrefix(v, "REDACTED-") {
				v = "REDACTED"
			}
			if k == "scope" {
				// A set: clients order it as they please.
				f := strings.Fields(v)
				sort.Strings(f)
				v = strings.Join(f, " ")
			}
			ps = append(ps, k+"="+v)
		}
	}
	return ps
}

// ReplayAnswer rewrites body, the recorded 200 answer to a request for
// path, for a replay server at origin: protected-resource metadata (at a
// well-known location, or where the recorder noted it rewrote it) names
// the replay server and fronts its authorization servers, a fronted
// authorization server's metadata points back at the replay server, and
// the metadata of the recorded server's own origin (2025-03-26), which
// the recorder fronted, is fronted at origin. rewritten is the recorded
// exchange's Mcpvcr-Rewritten note, upstream the recorded server's URL.
// A body it cannot rewrite is returned as it is.
func ReplayAnswer(body []byte, path, origin, rewritten, upstream string) []byte {
	front, isFront := ParseFront(path)
	switch {
	case IsResourceMetadata(path) || strings.HasPrefix(rewritten, "resource="):
		if nb, _, err := RewriteResourceMetadata(body, origin, true); err == nil {
			return nb
		}
	case isFront && front.Endpoint == "":
		if nb, _, err := RewriteAuthServerMetadata(body, origin+FrontPrefix+front.ID); err == nil {
			return nb
		}
	case IsOriginMetadata(path) && rewritten != "":
		if u, err := url.Parse(upstream); err == nil {
			id := FrontID(Origin(u.String()))
			if nb, _, err := RewriteAuthServerMetadataAt(body, origin, origin+FrontPrefix+id); err == nil {
				return nb
			}
		}
	}
	return body
}

// AuthorizeBack returns where replay sends the browser that visits an
// authorization endpoint (live is the visit's query), as the recorded
// visit ended: a redirect to the client's redirect URI with the live
// state. recorded and status are the recorded answer's header and status:
// when the recording relayed the authorization server's own answer
// (AuthorizeRelayed), its parameters are replayed (the code placeholder,
// an error, RFC 9207 iss naming issuer when the recorder had rewritten
// it); otherwise (the user logged in in a browser) the code is code(),
// the one the recorded client went on to exchange. It fails when the
// redirect URI is missing or not absolute.
func AuthorizeBack(live url.Values, recorded http.Header, status int, issuer string, code func() string) (location string, redirect int, ok bool) {
	back, err := url.Parse(live.Get("redirect_uri"))
	if err != nil || !back.IsAbs() {
		return "", 0, false
	}
	bq := back.Query()
	redirect = http.StatusFound
	if recorded.Get(AuthorizeHeader) == AuthorizeRelayed {
		if u, err := url.Parse(recorded.Get("Location")); err == nil {
			for k, vs := range u.Query() {
				bq[k] = vs
			}
		}
		if strings.Contains(recorded.Get("Mcpvcr-Rewritten"), "iss=") {
			bq.Set("iss", issuer)
		}
		if status/100 == 3 {
			redirect = status
		}
	} else {
		bq.Set("code", code())
	}
	bq.Del("state")
	if state := live.Get("state"); state != "" {
		bq.Set("state", state)
	}
	back.RawQuery = bq.Encode()
	return back.String(), redirect, true
}

// ChallengeWriter rewrites resource_metadata in a recorded
// WWW-Authenticate (a 401 or 403 of the MCP endpoint) to name the server
// at Origin, as it writes the header.
type ChallengeWriter struct {
	http.ResponseWriter
	Origin string
}

// WriteHeader rewrites the challenges, then writes the header.
func (w *ChallengeWriter) WriteHeader(code int) {
	if vs := w.Header().Values("WWW-Authenticate"); len(vs) > 0 {
		w.Header()["Www-Authenticate"] = RewriteChallenges(vs, w.Origin)
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap returns the ResponseWriter w writes to, for
// http.ResponseController.
func (w *ChallengeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
