package session

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// Generation is one launched browser of a session. A lost generation is never
// revived: the session replaces it with a new one.
type Generation struct {
	// N counts the session's generations from 1.
	N int
	// ProfileDir is the browser's user data directory ("" for a context in
	// a shared or remote browser).
	ProfileDir string

	// Context is the generation's browser context as the facade drives it:
	// its tabs (Tabs, CurrentTab, NewTab, Select…) and context-wide
	// operations (Cookies, StorageState, SetOffline…).
	*page.Context

	bc        playwright.BrowserContext
	s         *Session
	tempDir   bool
	remote    *remoteBrowser // set when the generation is attached to a browser someone else started
	lostCh    chan struct{}
	userAgent string // the context's, "" for the browser's own
	lostOnce  sync.Once
	dispOnce  sync.Once
	readyMu   sync.Mutex
	readyFail error

	mu    sync.Mutex
	state genState
}

// genState is what other layers keep per generation; it dies with it.
type genState struct {
	disposers map[string]func(context.Context)
	trace     *Trace
	routes    *Routes
	video     *Video
}

// newGeneration makes generation n of s over bc; remote is the browser it
// is attached to, nil for one s launched; ua is the user agent bc was
// created with ("" for the browser's own).
func newGeneration(s *Session, n int, bc playwright.BrowserContext, profile string, temp bool, remote *remoteBrowser, ua string) *Generation {
	g := &Generation{N: n, bc: bc, ProfileDir: profile, s: s, tempDir: temp, remote: remote, lostCh: make(chan struct{}), userAgent: ua}
	bc.SetDefaultTimeout(float64(s.cfg.actionTimeout().Milliseconds()))
	bc.SetDefaultNavigationTimeout(float64(s.cfg.navigationTimeout().Milliseconds()))
	bc.OnClose(func(playwright.BrowserContext) { g.markLost() })
	g.Context = page.NewContext(bc, g.pageEnv())
	return g
}

// pageEnv is what the generation's tabs need from it.
func (g *Generation) pageEnv() page.Env {
	s := g.s
	return page.Env{
		Lost:              g.lostCh,
		ActionTimeout:     s.cfg.actionTimeout(),
		NavigationTimeout: s.cfg.navigationTimeout(),
		SettleTimeout:     s.cfg.settleTimeout(),
		Log:               s.log,
		Refs:              s.refs,
		RefMu:             &s.refMu,
		Endpoint:          g.endpoint(),
		Watch:             s.CDP() == nil,
		InitScripts:       len(s.cfg.Context.InitScripts) > 0,
		TempDir:           ownedTempDir,
		OnConsole:         s.notifyConsole,
		OnCrash: func(t *page.Tab) {
			s.notify(NoticeError, "crash", "tab %d crashed; browser_navigate on it opens a new page", t.ID)
		},
		OnDownload:      func(t *page.Tab, d playwright.Download) { s.captureDownload(g, t, d) },
		OnDownloadEvent: func(_ *page.Tab, e page.DownloadEvent) { s.downloadEvent(g, e) },
		OnTab:           g.videoTabOpened,
		MaxTabs:         s.cfg.maxTabs(),
		UserAgent:       g.userAgent,
		WebMCP:          s.cfg.WebMCP,
		OnWebMCP:        func(*page.Tab) { s.webmcpChanged() },
	}
}

// Lost reports whether the browser of this generation is gone.
func (g *Generation) Lost() bool {
	select {
	case <-g.lostCh:
		return true
	default:
		return false
	}
}

// LostCh is closed when the browser is lost.
func (g *Generation) LostCh() <-chan struct{} { return g.lostCh }

// markLost revokes what the generation published (its CDP capability)
// first, then wakes every call waiting on it: a caller told the browser is
// gone never finds a stale capability.
func (g *Generation) markLost() {
	g.lostOnce.Do(func() {
		g.s.lost(g)
		close(g.lostCh)
	})
}

// Reject marks a just-launched generation as unusable (from an OnGeneration
// hook, e.g. when its ownership proof failed).
func (g *Generation) Reject(err error) {
	g.readyMu.Lock()
	g.readyFail = err
	g.readyMu.Unlock()
}

func (g *Generation) readyErr() error {
	g.readyMu.Lock()
	defer g.readyMu.Unlock()
	return g.readyFail
}

// BrowserPIDs lists the processes of this generation's browser.
func (g *Generation) BrowserPIDs() []int {
	if g.ProfileDir == "" {
		return nil
	}
	return ProfilePIDs(g.ProfileDir)
}

// BrowserVersion is the version of the generation's browser, "" if unknown.
func (g *Generation) BrowserVersion() string {
	if b := g.bc.Browser(); b != nil {
		return b.Version()
	}
	return ""
}

// dispose closes the browser, makes sure its processes are gone and removes
// a temporary profile, all bounded by ctx (and at most 10 s for the close
// itself). Safe to call more than once; later calls return at once.
func (g *Generation) dispose(ctx context.Context) {
	g.dispOnce.Do(func() {
		log := g.s.log.With().Int("generation", g.N).Logger()
		c := browserClose{
			close: func() { _ = g.bc.Close() },
			lost:  g.markLost,
			drain: func() {
				if !g.Drain(5 * time.Second) {
					log.Warn().Msg("browser calls still running after dispose")
				}
			},
			log:  log,
			what: "browser",
		}
		if g.remote != nil {
			c.close = g.remote.detach // the browser is someone else's
		} else {
			c.kill = g.ProfileDir
		}
		if g.tempDir {
			c.remove = g.ProfileDir
		}
		closeBrowser(ctx, c)
	})
}

func removeAllRetry(dir string) error {
	var err error
	for i := 0; i < 20; i++ {
		if err = os.RemoveAll(dir); err == nil {
			if _, serr := os.Stat(dir); os.IsNotExist(serr) {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}
