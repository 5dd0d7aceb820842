package session

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// remoteBrowser is a browser someone else started, which a generation is
// attached to over CDP. Disposing of the generation disconnects from it; the
// browser and its pages stay.
type remoteBrowser struct {
	endpoint string
	browser  playwright.Browser
}

// detach disconnects from the remote browser without closing it.
func (r *remoteBrowser) detach() {
	// For a browser reached with ConnectOverCDP, Close drops the connection
	// and the contexts this connection created; the browser's default
	// context and its pages live on.
	_ = r.browser.Close()
}

// endpoint is the browser endpoint of a remote generation ("" for a browser
// this session launched): the first half of the ref cache's key.
func (g *Generation) endpoint() string {
	if g.remote != nil {
		return g.remote.endpoint
	}
	return ""
}

// Remote reports the endpoint of the browser the generation is attached to,
// or "" when the session launched it.
func (g *Generation) Remote() string { return g.endpoint() }

func (c Config) connectTimeout() time.Duration { return orDefault(c.CDPTimeout, 30*time.Second) }

// attachRemote makes a generation attached to a browser someone else
// started: over CDP (cfg.CDPEndpoint: its first context and pages become
// the generation's; the ref cache resolves refs of snapshots an earlier
// generation took of the same targets), or through a Playwright server
// (cfg.Endpoint: a new context with the session's context options).
// Connecting is bounded by cfg.CDPTimeout; a failure keeps nothing, so the
// next call tries again.
func (s *Session) attachRemote(ctx context.Context, n int) (*Generation, error) {
	pw, err := s.drv.Get(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	timeout := s.cfg.connectTimeout()
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, max(time.Until(dl), time.Second))
	}
	cdp, endpoint := s.cfg.CDPEndpoint != "", s.cfg.CDPEndpoint
	if !cdp {
		endpoint = s.cfg.Endpoint
	}
	connect := func() (playwright.Browser, error) {
		if cdp {
			return pw.Chromium.ConnectOverCDP(endpoint, playwright.BrowserTypeConnectOverCDPOptions{
				Headers: s.cfg.CDPHeaders,
				Timeout: playwright.Float(float64(timeout.Milliseconds())),
			})
		}
		return pw.Chromium.Connect(endpoint, playwright.BrowserTypeConnectOptions{
			Headers: s.cfg.EndpointHeaders,
			Timeout: playwright.Float(float64(timeout.Milliseconds())),
		})
	}
	var br playwright.Browser
	if s.cfg.PickEndpoint != nil {
		// A pool: the endpoint this session had, or another when that one
		// cannot be reached (tried once more at once).
		for attempt, failed := 0, ""; attempt < 2; attempt++ {
			if endpoint, err = s.cfg.PickEndpoint(ctx, failed); err != nil {
				return nil, err
			}
			cdp = strings.HasPrefix(endpoint, "http://") || strings.HasPrefix(endpoint, "https://")
			if br, err = connect(); err == nil {
				break
			}
			failed = endpoint
		}
	} else {
		br, err = connect()
	}
	if err != nil {
		return nil, fmt.Errorf("connect to the browser at %s within %s (check that it runs and answers there; the next call tries again): %w",
			endpoint, timeout, page.Classify("connect", err))
	}
	var bc playwright.BrowserContext
	// A pool browser is shared by many sessions: each opens a context of its
	// own (closed when it detaches), never the browser's default context,
	// which would hand one session another's pages.
	if cs := br.Contexts(); cdp && len(cs) > 0 && s.cfg.PickEndpoint == nil {
		bc = cs[0]
	} else {
		opts, oerr := s.cfg.newContextOptions(pw, false, "")
		if oerr == nil {
			bc, oerr = br.NewContext(opts)
		}
		if oerr != nil {
			_ = br.Close()
			return nil, fmt.Errorf("open a context in the browser at %s: %w", endpoint, oerr)
		}
	}
	g := newGeneration(s, n, bc, "", false, &remoteBrowser{endpoint: endpoint, browser: br}, s.cfg.Context.UserAgent)
	br.OnDisconnected(func(playwright.Browser) { g.markLost() })
	if err := g.prepare(ctx, pw, false, cdp); err != nil {
		g.remote.detach()
		return nil, fmt.Errorf("prepare the browser context at %s: %w", endpoint, err)
	}
	s.log.Info().Int("generation", n).Int64("ms", time.Since(start).Milliseconds()).Msg("attached to a remote browser")
	return g, nil
}

// RemoteEndpoint is the endpoint of the remote browser the current
// generation is attached to, or "" when the session launched its own (or
// has no browser yet).
func (s *Session) RemoteEndpoint() string {
	s.mu.Lock()
	g := s.gen
	s.mu.Unlock()
	if g == nil || g.remote == nil {
		return ""
	}
	return g.remote.endpoint
}
