package cdpproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// route kinds under /cdp/<cap>.
type routeKind int

const (
	routeNone      routeKind = iota
	routeJSON                // discovery JSON, rewritten
	routeRaw                 // passed through (protocol, activate, close)
	routeWebSocket           // /devtools/{browser,page}/<id>
	routeBadID               // a target route with an id we refuse
)

type route struct {
	kind     routeKind
	upstream string   // upstream path
	methods  []string // allowed methods
	query    bool     // forward the raw query (/json/new?<url>)
	target   string   // the target the route acts on (activate, close), checked first
}

// classify maps the path after /cdp/<cap> to a route.
func classify(rest string) route {
	get := []string{http.MethodGet}
	switch rest {
	case "", "/", "/json/version", "/json/version/":
		return route{kind: routeJSON, upstream: "/json/version", methods: get}
	case "/json", "/json/", "/json/list", "/json/list/":
		return route{kind: routeJSON, upstream: "/json/list", methods: get}
	case "/json/protocol", "/json/protocol/":
		return route{kind: routeRaw, upstream: "/json/protocol", methods: get}
	case "/json/new":
		// Chromium 111+ refuses GET /json/new; so do we.
		return route{kind: routeJSON, upstream: "/json/new", methods: []string{http.MethodPut}, query: true}
	}
	for _, prefix := range []string{"/json/activate/", "/json/close/"} {
		if id, ok := strings.CutPrefix(rest, prefix); ok {
			if !validTargetID(id) {
				return route{kind: routeBadID}
			}
			return route{kind: routeRaw, upstream: rest, methods: []string{http.MethodGet, http.MethodPut}, target: id}
		}
	}
	if strings.HasPrefix(rest, "/devtools/") {
		if !devtoolsPath(rest) {
			return route{kind: routeBadID}
		}
		return route{kind: routeWebSocket, upstream: rest, methods: get}
	}
	return route{kind: routeNone}
}

// serveDiscovery forwards one HTTP route to the browser and rewrites the answer.
func (p *Proxy) serveDiscovery(w http.ResponseWriter, r *http.Request, g *generation, rt route) {
	if !p.acquire(&p.http, p.limits.MaxHTTPRequests) {
		writeError(w, http.StatusServiceUnavailable, codeLimit,
			fmt.Sprintf("too many concurrent CDP HTTP requests (max %d); try again later", p.limits.MaxHTTPRequests))
		return
	}
	defer p.release(&p.http)

	// The generation's context ends the call on revocation; the request's
	// context ends it when the client goes away.
	ctx, cancel := context.WithTimeoutCause(g.ctx, p.limits.Timeout, context.DeadlineExceeded)
	defer cancel()
	stop := context.AfterFunc(r.Context(), cancel)
	defer stop()

	if rt.target != "" {
		ok, err := p.reachable(g, rt.target)
		switch {
		case err != nil:
			p.upstreamFailed(w, g, ctx, rt, err)
			return
		case !ok:
			writeNotFound(w) // a privileged target is not there for the client
			return
		}
	}
	target := *g.upstream
	target.Path = rt.upstream
	if rt.query {
		target.RawQuery = r.URL.RawQuery
		// Chromium percent-decodes the whole query and opens it as a URL.
		u := unescapeQuery(r.URL.RawQuery)
		if privilegedURL(u) {
			writeError(w, http.StatusForbidden, codeForbidden, "/json/new: URL "+quote(u)+": "+errPrivileged.Error())
			return
		}
		if p.files != nil {
			if err := checkURL(u); err != nil {
				writeError(w, http.StatusForbidden, codeFilePolicy, "/json/new: "+err.Error())
				return
			}
		}
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, target.String(), nil)
	if err != nil {
		writeError(w, http.StatusBadRequest, codeBadRequest, "invalid CDP request")
		return
	}
	resp, err := p.transport.RoundTrip(req)
	if err != nil {
		p.upstreamFailed(w, g, ctx, rt, err)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, p.limits.MaxResponseBytes+1))
	if err != nil {
		p.upstreamFailed(w, g, ctx, rt, err)
		return
	}
	if int64(len(body)) > p.limits.MaxResponseBytes {
		p.logf("cdpproxy: port %d: %s: %v", p.Port(), rt.upstream,
			fmt.Errorf("browser answer over %d bytes: %w", p.limits.MaxResponseBytes, ErrLimit))
		writeError(w, http.StatusBadGateway, codeBadGateway, "browser answer too large")
		return
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		writeError(w, resp.StatusCode, codeUpstreamError, "the browser refused the CDP request")
		return
	default:
		p.logf("cdpproxy: port %d: %s: browser answered %d", p.Port(), rt.upstream, resp.StatusCode)
		writeError(w, http.StatusBadGateway, codeBadGateway, "invalid answer from the browser")
		return
	}
	contentType := "text/plain; charset=utf-8"
	if rt.kind == routeJSON {
		switch rt.upstream {
		case "/json/list":
			body, _, err = g.targets.filterList(body)
		case "/json/new":
			g.targets.observeInfo(body)
		}
		if err == nil {
			body, err = g.rw.body(body)
		}
		if err != nil {
			p.logf("cdpproxy: port %d: %s: %v", p.Port(), rt.upstream, err)
			writeError(w, http.StatusBadGateway, codeBadGateway, "invalid answer from the browser")
			return
		}
		contentType = "application/json; charset=utf-8"
	} else if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		contentType = "application/json; charset=utf-8"
	}
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

// upstreamFailed answers for a failed exchange with the browser.
func (p *Proxy) upstreamFailed(w http.ResponseWriter, g *generation, ctx context.Context, rt route, err error) {
	switch {
	case g.ctx.Err() != nil:
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "CDP endpoint revoked: the browser is gone")
	case errors.Is(context.Cause(ctx), context.DeadlineExceeded) || isTimeout(err):
		p.logf("cdpproxy: port %d: %s: browser did not answer within %v", p.Port(), rt.upstream, p.limits.Timeout)
		writeError(w, http.StatusGatewayTimeout, codeGatewayTimeout, "the browser did not answer in time")
	case ctx.Err() != nil:
		// The client went away; nobody reads this answer.
		writeError(w, http.StatusServiceUnavailable, codeUnavailable, "request cancelled")
	default:
		p.logf("cdpproxy: port %d: %s: %v", p.Port(), rt.upstream, err)
		writeError(w, http.StatusBadGateway, codeBadGateway, "the browser could not be reached")
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// reachable reports whether a client may act on the target id: a target the
// generation knows, or finds in the browser's /json/list, that is not
// privileged.
func (p *Proxy) reachable(g *generation, id string) (bool, error) {
	priv, known := g.targets.lookup(id)
	if !known {
		if err := p.listTargets(g); err != nil {
			return false, err
		}
		priv, known = g.targets.lookup(id)
	}
	return known && !priv, nil
}

// maxTargetListBytes bounds the target list the proxy reads for itself.
const maxTargetListBytes = 16 << 20

// listTargets reads the browser's /json/list — every page, frame, worker,
// DevTools window and WebUI page, though not tab targets — into the
// generation's target table.
func (p *Proxy) listTargets(g *generation) error {
	ctx, cancel := context.WithTimeout(g.ctx, p.limits.Timeout)
	defer cancel()
	u := *g.upstream
	u.Path = "/json/list"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	resp, err := p.transport.RoundTrip(req)
	if err != nil {
		return fmt.Errorf("list targets: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTargetListBytes+1))
	switch {
	case err != nil:
		return fmt.Errorf("list targets: %w", err)
	case len(body) > maxTargetListBytes:
		return fmt.Errorf("list targets: answer over %d bytes: %w", maxTargetListBytes, ErrLimit)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("list targets: status %d", resp.StatusCode)
	}
	_, _, err = g.targets.filterList(body)
	return err
}
