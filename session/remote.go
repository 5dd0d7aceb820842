package session

import (
	"context"
	"fmt"
	"time"

	"github.com/mxschmitt/playwright-go"
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

// attachRemote makes a generation attached to the browser at
// cfg.CDPEndpoint. Its pages become tabs; the ref cache resolves refs of
// snapshots an earlier generation took of the same targets.
func (s *Session) attachRemote(ctx context.Context, n int) (*Generation, error) {
	pw, err := s.drv.Get(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	timeout := s.cfg.launchTimeout()
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Second)
	}
	br, err := pw.Chromium.ConnectOverCDP(s.cfg.CDPEndpoint, playwright.BrowserTypeConnectOverCDPOptions{
		Timeout: playwright.Float(float64(timeout.Milliseconds())),
	})
	if err != nil {
		return nil, fmt.Errorf("connect to the browser at %s: %w", s.cfg.CDPEndpoint, classify("connect", err, false))
	}
	var bc playwright.BrowserContext
	if cs := br.Contexts(); len(cs) > 0 {
		bc = cs[0]
	} else if bc, err = br.NewContext(); err != nil {
		_ = br.Close()
		return nil, fmt.Errorf("open a context in the browser at %s: %w", s.cfg.CDPEndpoint, err)
	}
	g := newGeneration(s, n, bc, "", false)
	g.remote = &remoteBrowser{endpoint: s.cfg.CDPEndpoint, browser: br}
	br.OnDisconnected(func(playwright.Browser) { g.markLost() })
	s.log.Info().Int("generation", n).Int64("ms", time.Since(start).Milliseconds()).Msg("attached to a remote browser")
	return g, nil
}
