package session

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// Generation is one launched browser of a session. A lost generation is never
// revived: the session replaces it with a new one.
type Generation struct {
	// N counts the session's generations from 1.
	N int
	// ProfileDir is the browser's user data directory ("" for a context in
	// a shared or remote browser).
	ProfileDir string

	bc        playwright.BrowserContext
	s         *Session
	tempDir   bool
	remote    *remoteBrowser // set when the generation is attached to a browser someone else started
	lostCh    chan struct{}
	lostOnce  sync.Once
	dispOnce  sync.Once
	readyMu   sync.Mutex
	readyFail error
	calls     calls // goroutines carrying browser calls (door.go)

	mu      sync.Mutex
	tabs    []*Tab
	current *Tab
	nextTab int
	state   genState
	modalCh chan struct{} // closed when a modal state opens on any tab
}

// genState is what other layers keep per generation; it dies with it.
type genState struct {
	disposers map[string]func(context.Context)
	trace     *Trace
	routes    *Routes
}

func newGeneration(s *Session, n int, bc playwright.BrowserContext, profile string, temp bool) *Generation {
	g := &Generation{N: n, bc: bc, ProfileDir: profile, s: s, tempDir: temp, lostCh: make(chan struct{})}
	bc.SetDefaultTimeout(float64(s.cfg.actionTimeout().Milliseconds()))
	bc.SetDefaultNavigationTimeout(float64(s.cfg.navigationTimeout().Milliseconds()))
	bc.OnClose(func(playwright.BrowserContext) { g.markLost() })
	bc.OnPage(func(p playwright.Page) { g.addTab(p, false) })
	for _, p := range bc.Pages() {
		g.addTab(p, true)
	}
	return g
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
		closeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		done := make(chan struct{})
		go func() {
			defer close(done)
			if g.remote != nil {
				g.remote.detach()
				return
			}
			_ = g.bc.Close()
		}()
		select {
		case <-done:
		case <-closeCtx.Done():
			g.s.log.Warn().Int("generation", g.N).Msg("browser close timed out; killing")
		}
		g.markLost()
		if g.ProfileDir != "" && g.remote == nil {
			killAndWait(g.ProfileDir, 5*time.Second)
		}
		// The browser is closed (or killed): every call in flight has ended
		// or ends now.
		if !g.calls.close(5 * time.Second) {
			g.s.log.Warn().Int("generation", g.N).Msg("browser calls still running after dispose")
		}
		<-done
		if g.tempDir {
			if err := removeAllRetry(g.ProfileDir); err != nil {
				g.s.log.Warn().Err(err).Msg("remove temp profile")
			}
		}
		g.s.log.Info().Int("generation", g.N).Msg("browser disposed")
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

// Tabs returns the open tabs in order.
func (g *Generation) Tabs() []*Tab {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*Tab(nil), g.tabs...)
}

// Selected returns the selected tab, or nil; unlike CurrentTab it never
// opens or replaces one.
func (g *Generation) Selected() *Tab {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.current
}

// CurrentTab returns the selected tab, opening one if none is open.
func (g *Generation) CurrentTab(ctx context.Context) (*Tab, error) {
	g.mu.Lock()
	t := g.current
	g.mu.Unlock()
	if t != nil && !t.Closed() {
		if t.Crashed() {
			return g.replaceCrashed(ctx, t)
		}
		return t, nil
	}
	return g.NewTab(ctx)
}

// NewTab opens a tab and selects it.
func (g *Generation) NewTab(ctx context.Context) (*Tab, error) {
	p, err := call(ctx, g, "open a tab", stopOn{bound: g.s.cfg.navigationTimeout()}, func() (playwright.Page, error) { return g.bc.NewPage() })
	if err != nil {
		return nil, err
	}
	return g.addTab(p, true), nil
}

// Select makes the tab at index current and brings it to the front. No
// lock is held across the browser call: event handlers (a popup, a tab
// closing) take g.mu on Playwright's dispatch goroutine.
func (g *Generation) Select(ctx context.Context, index int) (*Tab, error) {
	g.mu.Lock()
	if index < 0 || index >= len(g.tabs) {
		n := len(g.tabs)
		g.mu.Unlock()
		return nil, fmt.Errorf("tab %d not found: there are %d tabs (0-%d); list them with browser_tabs", index, n, n-1)
	}
	t := g.tabs[index]
	g.current = t
	g.mu.Unlock()
	if err := run(ctx, g, "bring the tab to the front", stopOn{bound: g.s.cfg.actionTimeout()}, func() error { return t.p.BringToFront() }); err != nil {
		return t, err
	}
	return t, nil
}

// modalOpened wakes the calls watching for a modal state on any tab.
func (g *Generation) modalOpened() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.modalCh != nil {
		close(g.modalCh)
		g.modalCh = nil
	}
}

// modalElsewhere returns a channel closed once a tab other than t has a
// modal state open (at once if one has), and that tab.
func (g *Generation) modalElsewhere(t *Tab) (<-chan struct{}, func() *Tab) {
	blocker := func() *Tab {
		for _, o := range g.Tabs() {
			if o != t && len(o.Modals()) > 0 {
				return o
			}
		}
		return nil
	}
	if blocker() != nil {
		return closedCh, blocker
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.modalCh == nil {
		g.modalCh = make(chan struct{})
	}
	return g.modalCh, blocker
}

// IndexOf returns a tab's index, or -1.
func (g *Generation) IndexOf(t *Tab) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, x := range g.tabs {
		if x == t {
			return i
		}
	}
	return -1
}

func (g *Generation) replaceCrashed(ctx context.Context, t *Tab) (*Tab, error) {
	url := t.URL()
	_ = run(ctx, g, "close the crashed tab", stopOn{bound: g.s.cfg.actionTimeout()}, func() error { return t.p.Close() })
	g.removeTab(t)
	nt, err := g.NewTab(ctx)
	if err != nil {
		return nil, err
	}
	nt.mu.Lock()
	nt.replacedCrashed = url
	nt.mu.Unlock()
	return nt, nil
}

func (g *Generation) addTab(p playwright.Page, selectIt bool) *Tab {
	g.mu.Lock()
	for _, t := range g.tabs {
		if t.p == p {
			if selectIt {
				g.current = t
			}
			g.mu.Unlock()
			return t
		}
	}
	g.nextTab++
	t := newTab(g, p, g.nextTab)
	g.tabs = append(g.tabs, t)
	if selectIt || g.current == nil {
		g.current = t
	}
	g.mu.Unlock()
	return t
}

func (g *Generation) removeTab(t *Tab) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, x := range g.tabs {
		if x == t {
			g.tabs = append(g.tabs[:i], g.tabs[i+1:]...)
			if g.current == t {
				g.current = nil
				if len(g.tabs) > 0 {
					j := i
					if j >= len(g.tabs) {
						j = len(g.tabs) - 1
					}
					g.current = g.tabs[j]
				}
			}
			return
		}
	}
}
