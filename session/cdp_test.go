package session_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/coder/websocket"

	"github.com/cloakmcp/cloakbrowser-mcp/cdpproxy"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// privateTmp gives the test a short TMPDIR of its own (temporary profiles
// land there) and checks at the end, after every session is closed, that no
// profile was left behind.
func privateTmp(t *testing.T) string {
	t.Helper()
	// The package's driver must not inherit this TMPDIR: it outlives the test.
	driverReady(t)
	dir, err := os.MkdirTemp("", "cbm") // short: Chromium refuses long socket paths
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", dir)
	t.Cleanup(func() {
		left, _ := filepath.Glob(filepath.Join(dir, "cloakbrowser-mcp-profile-*"))
		for _, p := range left {
			if pids := session.ProfilePIDs(p); len(pids) > 0 {
				t.Errorf("browser processes left on %s: %v", p, pids)
			}
		}
		if len(left) > 0 {
			t.Errorf("profiles left behind: %v", left)
		}
		_ = os.RemoveAll(dir)
	})
	return dir
}

// killFigures are what one SIGKILL scenario measured.
type killFigures struct {
	inFlightAnswered time.Duration   // from the kill to the last in-flight answer
	restart          time.Duration   // from the first waiting call to the replacement being ready
	held             []time.Duration // how long each waiting call was held before it ran
	oldProfile       string
}

// killScenario runs the restart rule's main fault on s: 8 browser calls in
// flight on the current generation, the browser SIGKILLed, then 8 calls
// that must share one restart.
func killScenario(t testing.TB, s *session.Session) killFigures {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	g1 := mustGeneration(t, s)
	url1 := readyURL(t, s)
	internal1 := s.CDP().InternalPort()
	ws1URL, _ := pageWS(t, url1)
	old := dialCDP(t, ws1URL)
	if v, err := old.eval(ctx, "6*7"); err != nil || v != float64(42) {
		t.Fatalf("CDP through the capability: %v %v", v, err)
	}

	// 8 calls in flight: each blocks in the page until the browser dies.
	const calls = 8
	var runs [calls]atomic.Int32
	started := make(chan struct{}, calls)
	answers := make(chan error, calls)
	for i := range calls {
		go func() {
			answers <- s.Do(ctx, func(ctx context.Context, g *session.Generation) error {
				runs[i].Add(1)
				tab, err := g.CurrentTab(ctx)
				if err != nil {
					return err
				}
				started <- struct{}{}
				_, err = tab.Evaluate(ctx, `() => new Promise(() => {})`)
				switch {
				case err == nil:
					return errors.New("a never-ending evaluate returned")
				case g.Lost() || errors.Is(err, session.ErrBrowserGone):
					return fmt.Errorf("%w: %v", session.ErrBrowserGone, err)
				}
				return err
			})
		}()
	}
	for range calls {
		select {
		case <-started:
		case <-ctx.Done():
			t.Fatal("calls did not start")
		}
	}
	time.Sleep(200 * time.Millisecond) // let the evaluations reach the page
	killed := time.Now()
	killBrowser(t, g1)
	for i := range calls {
		select {
		case err := <-answers:
			if !errors.Is(err, session.ErrBrowserGone) {
				t.Fatalf("in-flight call %d answered %v, want ErrBrowserGone", i, err)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("only %d of %d in-flight calls answered", i, calls)
		}
	}
	fig := killFigures{inFlightAnswered: time.Since(killed), oldProfile: g1.ProfileDir}
	for i := range calls {
		if n := runs[i].Load(); n != 1 {
			t.Fatalf("in-flight call %d ran %d times", i, n)
		}
	}

	// Loss revokes at once; nothing restarts in the background.
	if s.Current() != nil {
		t.Fatal("a generation is current right after the loss")
	}
	if info := s.CDP().Info(); info.State != cdpproxy.StateUnavailable || info.DiscoveryURL != "" || info.Generation != g1.N {
		t.Fatalf("after the loss: %+v", info)
	}
	// 1001 if the revocation closed it first, 1011 if the dying browser's
	// side dropped first: closed either way, and never reconnected.
	old.waitClosedWith(t, websocket.StatusGoingAway, websocket.StatusInternalError)
	mustRefuse(t, url1)
	if s.Current() != nil {
		t.Fatal("discovery reads of the dead capability started a browser")
	}

	// 8 waiting calls share one restart and each runs exactly once.
	var mu sync.Mutex
	byGen := map[int]int{}
	var firstRun time.Time
	first := time.Now()
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			t0 := time.Now()
			ran := 0
			err := s.Do(ctx, func(ctx context.Context, g *session.Generation) error {
				now := time.Now()
				ran++
				mu.Lock()
				byGen[g.N]++
				fig.held = append(fig.held, now.Sub(t0))
				if firstRun.IsZero() {
					firstRun = now
				}
				mu.Unlock()
				tab, err := g.CurrentTab(ctx)
				if err != nil {
					return err
				}
				_, err = tab.Evaluate(ctx, `() => document.title`)
				return err
			})
			if err != nil || ran != 1 {
				t.Errorf("waiting call: err %v, ran %d times", err, ran)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	fig.restart = firstRun.Sub(first)
	if len(byGen) != 1 || byGen[g1.N+1] != calls {
		t.Fatalf("waiting calls by generation: %v; want all %d on generation %d (one restart)", byGen, calls, g1.N+1)
	}
	if g := s.Current(); g == nil || g.N != g1.N+1 {
		t.Fatalf("current generation %v after one restart", g)
	}

	// The new generation: new internal port, new capability, verified and
	// working; the old one stays refused.
	url2 := readyURL(t, s)
	if url2 == url1 || s.CDP().Info().Generation != g1.N+1 {
		t.Fatalf("no new capability: %+v", s.CDP().Info())
	}
	if ip := s.CDP().InternalPort(); ip == internal1 || ip == 0 {
		t.Fatalf("internal port %d, old %d", ip, internal1)
	}
	mustRefuse(t, url1)
	ws2URL, _ := pageWS(t, url2)
	c2 := dialCDP(t, ws2URL)
	if v, err := c2.eval(ctx, "6*7"); err != nil || v != float64(42) {
		t.Fatalf("CDP through the new capability: %v %v", v, err)
	}
	_ = c2.c.Close(websocket.StatusNormalClosure, "")
	waitProfileGone(t, g1.ProfileDir)
	return fig
}

// TestCDPBrowserKilledWithCallsInFlight: SIGKILL while 8 calls are in
// flight: each answered once (browser gone), the old capability and its
// socket refused, one restart for 8 waiting calls, the new capability works.
func TestCDPBrowserKilledWithCallsInFlight(t *testing.T) {
	noGoroutineLeaks(t)
	privateTmp(t)
	s := newCDPSession(t, cdpOpts{})
	fig := killScenario(t, s)
	t.Logf("in-flight calls answered %v after the kill; restart (launch + proof + publish) %v; waiting calls held median %v, max %v",
		fig.inFlightAnswered.Round(time.Millisecond), fig.restart.Round(time.Millisecond),
		median(fig.held).Round(time.Millisecond), slicesMax(fig.held).Round(time.Millisecond))
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestCDPKillStress runs the SIGKILL scenario 50 times in a row on one
// session and checks that no browser process or profile is left. It takes
// minutes: set CLOAKBROWSER_MCP_STRESS=1 to run it.
func TestCDPKillStress(t *testing.T) {
	if os.Getenv("CLOAKBROWSER_MCP_STRESS") == "" {
		t.Skip("set CLOAKBROWSER_MCP_STRESS=1 to run the 50× SIGKILL stress test")
	}
	noGoroutineLeaks(t)
	tmp := privateTmp(t)
	s := newCDPSession(t, cdpOpts{})
	const rounds = 50
	var restarts, held, answered []time.Duration
	var profiles []string
	start := time.Now()
	for i := range rounds {
		fig := killScenario(t, s)
		restarts = append(restarts, fig.restart)
		held = append(held, fig.held...)
		answered = append(answered, fig.inFlightAnswered)
		profiles = append(profiles, fig.oldProfile)
		if (i+1)%10 == 0 {
			t.Logf("round %d/%d: %v", i+1, rounds, time.Since(start).Round(time.Second))
		}
	}
	last := s.Current().ProfileDir
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	leaked := 0
	for _, p := range append(profiles, last) {
		leaked += len(session.ProfilePIDs(p))
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("profile left: %s", p)
		}
	}
	stray := browserProcs(tmp)
	left, _ := filepath.Glob(filepath.Join(tmp, "cloakbrowser-mcp-profile-*"))
	t.Logf("stress: %d SIGKILL rounds in %v: %d leaked processes on the %d profiles, %d browser processes under the test's TMPDIR, %d profiles left",
		rounds, time.Since(start).Round(time.Second), leaked, len(profiles)+1, stray, len(left))
	if leaked > 0 || stray > 0 || len(left) > 0 {
		t.Fatal("leaked browser processes or profiles")
	}
	t.Logf("restart (first waiting call → replacement ready, proof included): median %v, min %v, max %v",
		median(restarts).Round(time.Millisecond), slicesMin(restarts).Round(time.Millisecond), slicesMax(restarts).Round(time.Millisecond))
	t.Logf("waiting calls held (%d calls): median %v, max %v; in-flight calls answered after the kill: median %v, max %v",
		len(held), median(held).Round(time.Millisecond), slicesMax(held).Round(time.Millisecond),
		median(answered).Round(time.Millisecond), slicesMax(answered).Round(time.Millisecond))
}

// browserProcs counts live processes whose profile lies under dir: every
// browser process this test's sessions ever started (other tests and other
// users of the machine do not count).
func browserProcs(dir string) int {
	entries, _ := os.ReadDir("/proc")
	needle := []byte("--user-data-dir=" + dir + string(filepath.Separator))
	n := 0
	for _, e := range entries {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmd, needle) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && !bytes.Contains(stat, []byte(") Z ")) {
			n++
		}
	}
	return n
}

func slicesMax(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

func slicesMin(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

// TestCDPDriverKilled: the Playwright driver dies: every generation is lost
// (capability revoked, socket closed, orphaned browser disposed), and the
// next call starts one new driver and a new generation with a new
// capability.
func TestCDPDriverKilled(t *testing.T) {
	noGoroutineLeaks(t)
	privateTmp(t)
	d := driver.Start(driver.Options{}, true)
	t.Cleanup(func() { _ = d.Close() })
	s := newCDPSession(t, cdpOpts{drv: d})
	g1 := mustGeneration(t, s)
	url1 := readyURL(t, s)
	wsURL, _ := pageWS(t, url1)
	c := dialCDP(t, wsURL)
	oldPid := d.Pid()
	if err := syscall.Kill(oldPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-g1.LostCh():
	case <-time.After(10 * time.Second):
		t.Fatal("driver death did not make the generation lost")
	}
	// 1001 if the revocation came first; 1011 if the browser, its pipe to
	// the dead driver closed, exited first.
	c.waitClosedWith(t, websocket.StatusGoingAway, websocket.StatusInternalError)
	mustRefuse(t, url1)
	waitProfileGone(t, g1.ProfileDir) // what is left of the browser is disposed of at once
	if s.Current() != nil || s.CDP().Info().State != cdpproxy.StateUnavailable {
		t.Fatal("something is current after the driver died")
	}
	start := time.Now()
	var gen int
	err := s.Do(t.Context(), func(ctx context.Context, g *session.Generation) error {
		gen = g.N
		tab, err := g.CurrentTab(ctx)
		if err != nil {
			return err
		}
		_, err = tab.Evaluate(ctx, `() => document.title`)
		return err
	})
	if err != nil || gen != g1.N+1 {
		t.Fatalf("call after the driver died: gen %d, %v", gen, err)
	}
	t.Logf("recovery (new driver + launch + proof): %v", time.Since(start).Round(time.Millisecond))
	if d.Restarts() != 1 || d.Pid() == oldPid {
		t.Fatalf("driver restarts %d, pid %d (old %d)", d.Restarts(), d.Pid(), oldPid)
	}
	url2 := readyURL(t, s)
	wsURL2, _ := pageWS(t, url2)
	c2 := dialCDP(t, wsURL2)
	if v, err := c2.eval(t.Context(), "6*7"); err != nil || v != float64(42) {
		t.Fatalf("new capability: %v %v", v, err)
	}
	_ = c2.c.Close(websocket.StatusNormalClosure, "")
	mustRefuse(t, url1)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestCDPRelaunchFailure: the binary disappears and the browser dies: the
// waiting calls share one failed attempt and fail fast, nothing is
// published; once the binary is back a later call recovers.
func TestCDPRelaunchFailure(t *testing.T) {
	noGoroutineLeaks(t)
	privateTmp(t)
	link := filepath.Join(t.TempDir(), "chrome")
	if err := os.Symlink(chromium(t), link); err != nil {
		t.Fatal(err)
	}
	var resolves atomic.Int32
	s := newCDPSession(t, cdpOpts{resolve: func(context.Context) (cloakbrowser.BinaryInfo, error) {
		resolves.Add(1)
		return cloakbrowser.BinaryInfo{BinaryPath: link, Engine: cloakbrowser.EngineChromium, Source: cloakbrowser.SourceFlag}, nil
	}})
	g1 := mustGeneration(t, s)
	url1 := readyURL(t, s)
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	killBrowser(t, g1)
	resolves.Store(0)

	const calls = 8
	var ran atomic.Int32
	errs := make([]error, calls)
	took := make([]time.Duration, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			t0 := time.Now()
			errs[i] = s.Do(t.Context(), func(context.Context, *session.Generation) error {
				ran.Add(1)
				return nil
			})
			took[i] = time.Since(t0)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), link) {
			t.Fatalf("waiting call %d: %v; want a launch error naming %s", i, err, link)
		}
		if took[i] > 10*time.Second {
			t.Fatalf("waiting call %d failed after %v, not fast", i, took[i])
		}
	}
	t.Logf("failed relaunch: calls failed after median %v, max %v: %v", median(took).Round(time.Millisecond), slicesMax(took).Round(time.Millisecond), errs[0])
	if ran.Load() != 0 || resolves.Load() != 1 {
		t.Fatalf("fn ran %d times, %d launch attempts; want 0 and 1", ran.Load(), resolves.Load())
	}
	if info := s.CDP().Info(); info.State != cdpproxy.StateUnavailable || info.DiscoveryURL != "" {
		t.Fatalf("published after a failed relaunch: %+v", info)
	}
	mustRefuse(t, url1)
	waitProfileGone(t, g1.ProfileDir)

	if err := os.Symlink(chromium(t), link); err != nil {
		t.Fatal(err)
	}
	g := mustGeneration(t, s)
	url := readyURL(t, s)
	if url == url1 || g.N != g1.N+2 {
		t.Fatalf("recovery: generation %d, same capability %v", g.N, url == url1)
	}
	if code, body := getJSON(t, url+"/json/version"); code != http.StatusOK {
		t.Fatalf("recovered capability: %d %s", code, body)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestCDPClientAlongsideCalls: a CDP client drives the page while browser
// calls run on it (no deadlock, both see each other's effects); CDP clients
// disconnecting, politely or not, and discovery reads trigger nothing.
func TestCDPClientAlongsideCalls(t *testing.T) {
	noGoroutineLeaks(t)
	privateTmp(t)
	s := newCDPSession(t, cdpOpts{})
	g1 := mustGeneration(t, s)
	url := readyURL(t, s)
	// The internal endpoint listens on loopback only, the proxy where leased.
	if got := listeners(s.CDP().InternalPort()); len(got) != 1 || got[0] != "127.0.0.1" {
		t.Fatalf("internal DevTools endpoint listens on %v, want only 127.0.0.1", got)
	}
	if got := listeners(s.CDP().Port()); len(got) != 1 || got[0] != "127.0.0.1" {
		t.Fatalf("CDP proxy listens on %v, want only 127.0.0.1", got)
	}
	wsURL, _ := pageWS(t, url)
	a := dialCDP(t, wsURL)
	b := dialCDP(t, wsURL)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	const rounds = 40
	var wg sync.WaitGroup
	for _, c := range []*cdpClient{a, b} {
		wg.Go(func() {
			for range rounds {
				if _, err := c.eval(ctx, "window.__n = (window.__n || 0) + 1"); err != nil {
					t.Errorf("CDP client: %v", err)
					return
				}
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for range rounds / 4 {
				err := s.Do(ctx, func(ctx context.Context, g *session.Generation) error {
					tab, err := g.CurrentTab(ctx)
					if err != nil {
						return err
					}
					_, err = tab.Evaluate(ctx, `() => { document.title = "mcp " + (window.__n || 0); return window.__n || 0; }`)
					return err
				})
				if err != nil {
					t.Errorf("browser call: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	var n any
	if err := s.Do(ctx, func(ctx context.Context, g *session.Generation) error {
		tab, err := g.CurrentTab(ctx)
		if err == nil {
			n, err = tab.Evaluate(ctx, `() => window.__n`)
		}
		return err
	}); err != nil || n != 2*rounds {
		t.Fatalf("window.__n = %v (%v), want %d: the CDP clients' writes", n, err, 2*rounds)
	}
	if title, err := a.eval(ctx, "document.title"); err != nil || !strings.HasPrefix(title.(string), "mcp ") {
		t.Fatalf("the CDP client does not see the browser call's title: %v %v", title, err)
	}

	// Disconnects and discovery reads: nothing happens to the browser.
	b.c.CloseNow()
	_ = a.c.Close(websocket.StatusNormalClosure, "done")
	for _, p := range []string{"", "/json/list", "/json/protocol"} {
		if code, _ := getJSON(t, url+p); code != http.StatusOK {
			t.Fatalf("discovery %q: %d", p, code)
		}
	}
	testtier.EventuallyState(t, 5*time.Second, "the CDP connections to be uncounted", func() (bool, string) {
		info := s.CDP().Info()
		return info.ActiveConnections == 0, fmt.Sprintf("%+v", info)
	})
	staysOn(t, s, g1, 300*time.Millisecond)
	if g1.Lost() || s.Current() != g1 || readyURL(t, s) != url || s.CDP().Info().Generation != g1.N {
		t.Fatalf("a CDP disconnect changed the session: lost %v, info %+v", g1.Lost(), s.CDP().Info())
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestCDPCapabilitiesRefused: guessed, revoked and other sessions'
// capabilities get the same 404, over HTTP and WebSocket.
func TestCDPCapabilitiesRefused(t *testing.T) {
	noGoroutineLeaks(t)
	privateTmp(t)
	a := newCDPSession(t, cdpOpts{})
	b := newCDPSession(t, cdpOpts{})
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, s := range []*session.Session{a, b} {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			_, errs[i] = s.Generation(ctx)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	ua, ub := readyURL(t, a), readyURL(t, b)
	pa, pb := a.CDP().Port(), b.CDP().Port()

	guess := func() string {
		var r [32]byte
		_, _ = rand.Read(r[:])
		return base64.RawURLEncoding.EncodeToString(r[:])
	}
	capA := capabilityOf(ua)
	flipped := capA[:len(capA)-1] + string("AB"[boolInt(capA[len(capA)-1] == 'A')])
	cases := []struct{ name, url string }{
		{"guessed on A", fmt.Sprintf("http://127.0.0.1:%d/cdp/%s", pa, guess())},
		{"guessed on B", fmt.Sprintf("http://127.0.0.1:%d/cdp/%s", pb, guess())},
		{"one character off", fmt.Sprintf("http://127.0.0.1:%d/cdp/%s", pa, flipped)},
		{"prefix of A's", fmt.Sprintf("http://127.0.0.1:%d/cdp/%s", pa, capA[:20])},
		{"A's on B's port", onPort(ua, pb)},
		{"B's on A's port", onPort(ub, pa)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { mustRefuse(t, tc.url) })
	}
	if rj := a.CDP().Proxy().Rejections(); rj.Capability == 0 {
		t.Fatalf("rejections not counted: %+v", rj)
	}

	// Revoked: A's browser is closed on request; its URL dies at once and
	// stays dead after the next call publishes a new one. B is unaffected.
	_ = a.CloseBrowser(context.Background())
	mustRefuse(t, ua)
	mustGeneration(t, a)
	ua2 := readyURL(t, a)
	if ua2 == ua {
		t.Fatal("same capability after a restart")
	}
	mustRefuse(t, ua)
	for _, u := range []string{ua2, ub} {
		if code, body := getJSON(t, u+"/json/version"); code != http.StatusOK {
			t.Fatalf("live capability refused: %d %s", code, body)
		}
	}
	// Close runs backwards: the capability is revoked and its socket closed
	// (1001) while the browser still runs, then the browser goes, then the
	// listener and the lease.
	wsURL, _ := pageWS(t, ua2)
	live := dialCDP(t, wsURL)
	closeCode := make(chan websocket.StatusCode, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for {
			if _, _, err := live.c.Read(ctx); err != nil {
				closeCode <- websocket.CloseStatus(err)
				return
			}
		}
	}()
	ga := a.Current()
	for _, s := range []*session.Session{a, b} {
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if code := <-closeCode; code != websocket.StatusGoingAway {
		t.Fatalf("a live socket was closed with %d at session close, want 1001 (revoked before the browser went)", code)
	}
	waitProfileGone(t, ga.ProfileDir)
	// Closed: the listener is gone and the port is free again.
	for _, p := range []int{pa, pb} {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("port %d still held after Close: %v", p, err)
		}
		ln.Close()
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestCDPChromedp: a real third-party CDP client, chromedp through its
// remote allocator on the capability URL, opens a tab, navigates and reads
// the page, which the session sees too.
func TestCDPChromedp(t *testing.T) {
	noGoroutineLeaks(t)
	privateTmp(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Hello chromedp</title><h1 id="h">driven over the capability</h1>`)
	}))
	defer srv.Close()
	s := newCDPSession(t, cdpOpts{})
	g1 := mustGeneration(t, s)
	url := readyURL(t, s)
	code, body := getJSON(t, url+"/json/version")
	var version struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &version) != nil || !strings.Contains(version.WS, "/cdp/"+capabilityOf(url)+"/devtools/browser/") {
		t.Fatalf("/json/version through the proxy: %d %s", code, body)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := remote.NewAllocator(ctx, version.WS)
	defer cancelAlloc()
	cctx, cancelC := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(cctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatalf("chromedp navigate: %v", err)
	}
	title, err := chromedp.Run(cctx, chromedp.Title())
	if err != nil || title != "Hello chromedp" {
		t.Fatalf("chromedp title %q, %v", title, err)
	}
	heading, err := chromedp.Run(cctx, chromedp.Text(chromedp.CSS("#h")))
	if err != nil || heading != "driven over the capability" {
		t.Fatalf("chromedp text %q, %v", heading, err)
	}

	// The session's browser is the one chromedp drove: Playwright sees the tab.
	found := false
	for range 50 {
		for _, tab := range g1.Tabs() {
			if tab.URL() == srv.URL+"/" {
				found = true
			}
		}
		if found {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !found {
		t.Fatal("the session does not see the tab chromedp opened")
	}
	cancelC()
	cancelAlloc()
	staysOn(t, s, g1, 300*time.Millisecond)
	if g1.Lost() || s.Current() != g1 || readyURL(t, s) != url {
		t.Fatal("chromedp's disconnect changed the session")
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserKilledDuringALongTask: evaluations sent while the page runs a
// long task wait before their function even starts (the main world's
// holder of the call is made first). The browser killed then answers them,
// and nothing of theirs outlives the session: a command of the tab's CDP
// session in flight at the loss is never answered by the driver, so each
// is sent in waits of one second (one sent with the call's deadline kept
// its goroutine for the call's whole timeout).
func TestBrowserKilledDuringALongTask(t *testing.T) {
	noGoroutineLeaks(t)
	privateTmp(t)
	s := newCDPSession(t, cdpOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	g := mustGeneration(t, s)
	srv := serveHTML(t, map[string]string{"/": `<!doctype html><title>Busy soon</title><p>Busy soon</p>
<script>addEventListener('load', () => setTimeout(() => { for (;;) {} }, 1000))</script>`})
	if err := s.Do(ctx, func(ctx context.Context, g *session.Generation) error {
		tab, err := g.CurrentTab(ctx)
		if err != nil {
			return err
		}
		_, err = tab.Navigate(ctx, srv+"/")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // the long task runs (from 1 s after the load)
	const calls = 3
	answers := make(chan error, calls)
	for range calls {
		go func() {
			answers <- s.Do(ctx, func(ctx context.Context, g *session.Generation) error {
				tab, err := g.CurrentTab(ctx)
				if err != nil {
					return err
				}
				_, err = tab.Evaluate(ctx, `() => 1`)
				return err
			})
		}()
	}
	time.Sleep(500 * time.Millisecond) // their commands reach the page
	killBrowser(t, g)
	for i := range calls {
		select {
		case err := <-answers:
			if err == nil {
				t.Fatalf("call %d: an evaluation of a page held by a long task, its browser killed, returned a value", i)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("only %d of %d calls answered after the kill", i, calls)
		}
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
