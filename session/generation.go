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
	// Context is the browser's (persistent) context.
	Context playwright.BrowserContext
	// ProfileDir is the browser's user data directory.
	ProfileDir string

	s         *Session
	tempDir   bool
	lostCh    chan struct{}
	lostOnce  sync.Once
	dispOnce  sync.Once
	readyMu   sync.Mutex
	readyFail error

	mu      sync.Mutex
	tabs    []*Tab
	current *Tab
	nextTab int
	values  map[string]any
}

func newGeneration(s *Session, n int, bc playwright.BrowserContext, profile string, temp bool) *Generation {
	g := &Generation{N: n, Context: bc, ProfileDir: profile, s: s, tempDir: temp, lostCh: make(chan struct{}), values: map[string]any{}}
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

func (g *Generation) markLost() {
	g.lostOnce.Do(func() {
		close(g.lostCh)
		g.s.lost(g)
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

// Value and SetValue hold per-generation data owned by other layers (the CDP
// endpoint, trace state) so it dies with the generation.
func (g *Generation) Value(key string) any {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.values[key]
}

// SetValue stores v under key for the life of the generation.
func (g *Generation) SetValue(key string, v any) {
	g.mu.Lock()
	g.values[key] = v
	g.mu.Unlock()
}

// BrowserPIDs lists the processes of this generation's browser.
func (g *Generation) BrowserPIDs() []int { return ProfilePIDs(g.ProfileDir) }

// dispose closes the browser, makes sure its processes are gone and removes
// a temporary profile. Safe to call more than once.
func (g *Generation) dispose() {
	g.dispOnce.Do(func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = g.Context.Close()
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			g.s.log.Warn().Int("generation", g.N).Msg("browser close timed out; killing")
		}
		g.markLost()
		killAndWait(g.ProfileDir, 5*time.Second)
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
	if g.Lost() {
		return nil, ErrBrowserGone
	}
	p, err := g.Context.NewPage()
	if err != nil {
		if g.Lost() {
			return nil, ErrBrowserGone
		}
		return nil, fmt.Errorf("open tab: %w", err)
	}
	t := g.addTab(p, true)
	return t, nil
}

// Select makes the tab at index current.
func (g *Generation) Select(index int) (*Tab, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if index < 0 || index >= len(g.tabs) {
		return nil, fmt.Errorf("tab %d not found: there are %d tabs (0-%d); list them with browser_tabs", index, len(g.tabs), len(g.tabs)-1)
	}
	g.current = g.tabs[index]
	_ = g.current.Page.BringToFront()
	return g.current, nil
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
	url := t.Page.URL()
	_ = t.Page.Close()
	g.removeTab(t)
	nt, err := g.NewTab(ctx)
	if err != nil {
		return nil, err
	}
	nt.replacedCrashed = url
	return nt, nil
}

func (g *Generation) addTab(p playwright.Page, selectIt bool) *Tab {
	g.mu.Lock()
	for _, t := range g.tabs {
		if t.Page == p {
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
