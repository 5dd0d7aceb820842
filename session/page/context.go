package page

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mxschmitt/playwright-go"
	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// Env is what the tabs of a browser context need from the browser
// generation they belong to. The lifecycle (package session) fills it in
// when it opens the context; this package never reaches back into it.
type Env struct {
	// Lost is closed when the browser is lost: every call waiting at the
	// door returns ErrBrowserGone.
	Lost <-chan struct{}
	// ActionTimeout, NavigationTimeout and SettleTimeout are the session's
	// timeouts, defaults applied: element actions, navigations, and how
	// long an action waits for the requests it set off.
	ActionTimeout, NavigationTimeout, SettleTimeout time.Duration
	// Log receives the tabs' debug logs.
	Log zerolog.Logger
	// Refs keeps what re-resolves snapshot refs per browser target; RefMu
	// serializes one read-modify-write of an entry. Both outlive the
	// generation (they belong to the session).
	Refs  *snapshot.RefCache
	RefMu *sync.Mutex
	// Endpoint is the remote browser's endpoint ("" for a launched
	// browser): the first half of a ref cache key.
	Endpoint string
	// Watch is whether the watch (session/watch) can be trusted: false
	// when something else may drive the pages behind the tabs' back (a
	// published CDP endpoint).
	Watch bool
	// InitScripts is whether scripts of the user's run in every page
	// (--init-script): then even a blank page may be busy.
	InitScripts bool
	// TempDir makes a private temporary directory that the stale-directory
	// sweep recognizes (kind names it: "state-").
	TempDir func(kind string) (string, error)
	// OnConsole, OnCrash and OnDownload, if set, hear of a console message
	// or page error, a crash, and a download starting. They run on
	// Playwright's dispatch goroutine: they must not call the driver (start
	// the work with Context.Go).
	OnConsole  func(t *Tab, typ, text string)
	OnCrash    func(t *Tab)
	OnDownload func(t *Tab, d playwright.Download)
	// OnDownloadEvent, if set, hears of a download's progress as it runs
	// (downloads.go), on the same goroutine and with the same rule.
	OnDownloadEvent func(t *Tab, e DownloadEvent)
	// WebMCP collects the tools each tab's page registers through WebMCP
	// (webmcp.go; the browser must run with --enable-features=WebMCP);
	// OnWebMCP, if set, hears that a tab's list changed or that it closed,
	// on Playwright's dispatch goroutine (the same rule as OnConsole).
	WebMCP   bool
	OnWebMCP func(t *Tab)
	// OnTab, if set, hears of a tab opened (once it is wired), on the same
	// goroutine and with the same rule.
	OnTab func(t *Tab)
	// MaxTabs caps the context's open tabs: NewTab and OpenTab fail with
	// ErrTooManyTabs past it, and a popup a page opens past it is closed
	// at once. If zero, no cap.
	MaxTabs int
	// UserAgent is the user agent the context was created with (the
	// user's, or the browser's own without its headless token); "" when it
	// is the browser's own. Ending a device emulation returns to it.
	UserAgent string
}

// Context is one Playwright browser context seen through the door: its
// tabs, the calls in flight on it, and the operations that apply to all of
// its pages (cookies, storage state, permissions, geolocation, offline).
// A browser generation holds one.
type Context struct {
	bctx  playwright.BrowserContext
	env   Env
	calls calls     // goroutines carrying browser calls (door.go)
	refs  refLedger // binds refs to the tab whose snapshot issued them (refs.go)

	mu      sync.Mutex
	tabs    []*Tab
	current *Tab
	nextTab int
	arrived int           // pages that came to addTab new (listed, or closed at once past MaxTabs)
	opening int           // tabs NewTab and OpenTab are opening (MaxTabs)
	modalCh chan struct{} // closed when a modal state opens on any tab

	routed atomic.Bool // requests are intercepted (SetRouted)
}

// SetRouted says whether the context's requests go through routes of ours
// (mocks, an origin filter). Playwright then announces a request only once
// the browser has paused it for interception, which can come after the
// round trip that ends an action: Settle waits a little longer for it.
func (c *Context) SetRouted(on bool) { c.routed.Store(on) }

// NewContext wraps bctx; its open pages become tabs (the last one opened
// selected), and so does every page it opens later.
func NewContext(bctx playwright.BrowserContext, env Env) *Context {
	c := &Context{bctx: bctx, env: env}
	bctx.OnPage(func(p playwright.Page) { c.addTab(p, false, true) })
	for _, p := range bctx.Pages() {
		c.addTab(p, true, false)
	}
	return c
}

func (c *Context) isLost() bool {
	select {
	case <-c.env.Lost:
		return true
	default:
		return false
	}
}

// Drain refuses new calls and waits, at most d, for those in flight (they
// end when the browser closes); false if some are still running.
func (c *Context) Drain(d time.Duration) bool { return c.calls.close(d) }

// Run runs fn at the door of c (bounded by ctx and the browser's life, not
// by any tab's modal state): the lifecycle's own context-wide work (routes,
// tracing, downloads, the origin filter) goes through it.
func Run(ctx context.Context, c *Context, op string, fn func() error) error {
	return run(ctx, c, op, stopOn{}, fn)
}

// Call is Run for work with a result.
func Call[T any](ctx context.Context, c *Context, op string, fn func() (T, error)) (T, error) {
	return call(ctx, c, op, stopOn{}, fn)
}

// Tabs returns the open tabs in order.
func (c *Context) Tabs() []*Tab {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Tab(nil), c.tabs...)
}

// Selected returns the selected tab, or nil; unlike CurrentTab it never
// opens or replaces one.
func (c *Context) Selected() *Tab {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.current
}

// CurrentTab returns the selected tab, opening one if none is open. A tab
// whose page crashed stays (its calls answer ErrCrashed) until a navigation
// replaces its page.
func (c *Context) CurrentTab(ctx context.Context) (*Tab, error) {
	c.mu.Lock()
	t := c.current
	c.mu.Unlock()
	if t != nil && !t.Closed() {
		return t, nil
	}
	return c.NewTab(ctx)
}

// ErrTooManyTabs means the context has Env.MaxTabs tabs open.
var ErrTooManyTabs = errors.New("too many tabs")

// NewTab opens a tab and selects it.
func (c *Context) NewTab(ctx context.Context) (*Tab, error) {
	t, _, err := c.openTab(ctx, true)
	return t, err
}

// OpenTab opens a tab for the lifecycle's own use (a download's), without
// selecting it, and returns it with its page. It counts against MaxTabs.
func (c *Context) OpenTab(ctx context.Context) (*Tab, playwright.Page, error) {
	return c.openTab(ctx, false)
}

func (c *Context) openTab(ctx context.Context, selectIt bool) (*Tab, playwright.Page, error) {
	c.mu.Lock()
	if max := c.env.MaxTabs; max > 0 && len(c.tabs)+c.opening >= max {
		n := len(c.tabs)
		c.mu.Unlock()
		return nil, nil, fmt.Errorf("%w: this session has %d tabs open, its limit (--max-tabs); close one with browser_tabs action=close first", ErrTooManyTabs, n)
	}
	// Reserved until the tab is listed: the page event for it, which may
	// come first, must not find the cap reached.
	c.opening++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.opening--
		c.mu.Unlock()
	}()
	p, err := call(ctx, c, "open a tab", stopOn{bound: c.env.NavigationTimeout}, func() (playwright.Page, error) { return c.bctx.NewPage() })
	if err != nil {
		return nil, nil, err
	}
	return c.addTab(p, selectIt, false), p, nil
}

// Select makes the tab at index current and brings it to the front. No
// lock is held across the browser call: event handlers (a popup, a tab
// closing) take c.mu on Playwright's dispatch goroutine.
func (c *Context) Select(ctx context.Context, index int) (*Tab, error) {
	c.mu.Lock()
	if index < 0 || index >= len(c.tabs) {
		n := len(c.tabs)
		c.mu.Unlock()
		return nil, fmt.Errorf("tab %d not found: there are %d tabs (0-%d); list them with browser_tabs", index, n, n-1)
	}
	t := c.tabs[index]
	c.current = t
	c.mu.Unlock()
	if err := run(ctx, c, "bring the tab to the front", stopOn{bound: c.env.ActionTimeout}, func() error { return t.p.BringToFront() }); err != nil {
		return t, err
	}
	return t, nil
}

// modalOpened wakes the calls watching for a modal state on any tab.
func (c *Context) modalOpened() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.modalCh != nil {
		close(c.modalCh)
		c.modalCh = nil
	}
}

// modalElsewhere returns a channel closed once a tab other than t has a
// modal state open (at once if one has), and that tab.
func (c *Context) modalElsewhere(t *Tab) (<-chan struct{}, func() *Tab) {
	blocker := func() *Tab {
		for _, o := range c.Tabs() {
			if o != t && len(o.Modals()) > 0 {
				return o
			}
		}
		return nil
	}
	if blocker() != nil {
		return closedCh, blocker
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.modalCh == nil {
		c.modalCh = make(chan struct{})
	}
	return c.modalCh, blocker
}

// pagesArrived counts the pages that came to addTab new.
func (c *Context) pagesArrived() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.arrived
}

// indexOf returns a tab's index, or -1.
func (c *Context) indexOf(t *Tab) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.tabs {
		if x == t {
			return i
		}
	}
	return -1
}

// addTab returns the tab of p, making it if p is new. c.mu is not held
// while the tab subscribes to its page's events (wire): the tab is listed
// first, then wired, and a caller that finds it listed waits until it is
// wired. So the dispatch goroutine, when it brings the context's page event
// for a tab NewTab is wiring, dispatches none of the page's own events
// before the tab hears them. Wiring never waits on the dispatch goroutine:
// subscriptions are sent to the driver without waiting for a reply.
//
// A popup (a page a page opened) past MaxTabs is closed at once, unlisted,
// and the selected tab's events say so.
func (c *Context) addTab(p playwright.Page, selectIt, popup bool) *Tab {
	c.mu.Lock()
	for _, t := range c.tabs {
		if t.p == p {
			if selectIt {
				c.current = t
			}
			c.mu.Unlock()
			if !popup {
				// Ours after all: its page event came first.
				t.mu.Lock()
				t.popup = false
				t.mu.Unlock()
			}
			<-t.wired
			return t
		}
	}
	c.arrived++
	if max := c.env.MaxTabs; popup && max > 0 && len(c.tabs) >= max+c.opening {
		n, cur := len(c.tabs), c.current
		c.mu.Unlock()
		c.Go(func() { _ = p.Close() })
		if cur != nil {
			cur.AddEvent(fmt.Sprintf("A page opened a popup; it was closed at once: this session has %d tabs open, its limit (--max-tabs)", n))
		}
		return nil
	}
	c.nextTab++
	t := newTab(c, p, c.nextTab)
	t.popup = popup // before the tab is shared
	c.tabs = append(c.tabs, t)
	if selectIt || c.current == nil {
		c.current = t
	}
	c.mu.Unlock()
	t.wire()
	if c.env.OnTab != nil {
		c.env.OnTab(t)
	}
	return t
}

func (c *Context) removeTab(t *Tab) {
	closedAt := -1
	// After c.mu is released: the ledger reads t under t.mu.
	defer func() {
		if closedAt >= 0 {
			c.refs.tabClosed(t, closedAt)
		}
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.tabs {
		if x == t {
			closedAt = i
			c.tabs = append(c.tabs[:i], c.tabs[i+1:]...)
			if c.current == t {
				c.current = nil
				if len(c.tabs) > 0 {
					j := i
					if j >= len(c.tabs) {
						j = len(c.tabs) - 1
					}
					c.current = c.tabs[j]
				}
			}
			return
		}
	}
}

// GrantPermissions grants the browser context's pages permissions such as
// "geolocation".
func (c *Context) GrantPermissions(ctx context.Context, permissions []string) error {
	return run(ctx, c, "grant permissions", stopOn{}, func() error { return c.bctx.GrantPermissions(permissions) })
}

// SetGeolocation sets the position the browser context reports; nil clears
// it.
func (c *Context) SetGeolocation(ctx context.Context, geo *Geolocation) error {
	var pg *playwright.Geolocation
	op := "clear the geolocation"
	if geo != nil {
		pg = &playwright.Geolocation{Latitude: geo.Latitude, Longitude: geo.Longitude, Accuracy: geo.Accuracy}
		op = "set the geolocation"
	}
	return run(ctx, c, op, stopOn{}, func() error { return c.bctx.SetGeolocation(pg) })
}

// SetOffline switches the browser context's network off (every request
// fails) or back on.
func (c *Context) SetOffline(ctx context.Context, offline bool) error {
	return run(ctx, c, "set the network state", stopOn{}, func() error { return c.bctx.SetOffline(offline) })
}
