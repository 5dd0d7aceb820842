package server_test

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/httpguard"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// statePages serves pages that store and show per-browser state: /set
// writes a cookie and localStorage, /show prints what the server and the
// page see, /slow answers after 3 s.
func statePages(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/set", func(w http.ResponseWriter, r *http.Request) {
		who := html.EscapeString(r.URL.Query().Get("who"))
		fmt.Fprintf(w, `<!doctype html><title>Set %[1]s</title><p id="out">storing</p>
<script>document.cookie = "who=%[1]s; path=/"; localStorage.setItem("who", "%[1]s");
document.getElementById("out").textContent = "stored %[1]s";</script>`, who)
	})
	mux.HandleFunc("/show", func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Cookie("who")
		seen := "none"
		if c != nil {
			seen = c.Value
		}
		fmt.Fprintf(w, `<!doctype html><title>Show</title><p>server saw cookie %s</p><p id="out"></p>
<script>document.getElementById("out").textContent = "page saw storage " + (localStorage.getItem("who") || "none");</script>`, html.EscapeString(seen))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
		fmt.Fprint(w, `<!doctype html><title>Slow</title><p>finally</p>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// browserEnv gives an in-process server a short TMPDIR of its own (temp
// profiles land there) and an empty CloakBrowser cache.
func browserEnv(t *testing.T) string {
	t.Helper()
	mcptest.Chromium(t)
	_, tmp := serverEnv(t)
	t.Setenv("TMPDIR", tmp)
	t.Setenv("CLOAKBROWSER_CACHE_DIR", filepath.Join(tmp, "cache"))
	return tmp
}

func navigate(t *testing.T, c *mcptest.HTTPClient, url string) string {
	t.Helper()
	return c.MustCall(t, "browser_navigate", map[string]any{"url": url})
}

// navigateAll navigates clients[i] to urls[i], all at once, and returns
// what each navigate answered. A failure fails the test from the test's own
// goroutine, once every call has returned.
func navigateAll(t *testing.T, clients []*mcptest.HTTPClient, urls []string) []string {
	t.Helper()
	out := make([]string, len(clients))
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() { out[i], errs[i] = c.TryCall("browser_navigate", map[string]any{"url": urls[i]}) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustContain(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Fatalf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

func mustNotContain(t *testing.T, what, text string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(text, b) {
			t.Fatalf("%s shows %q, state crossed sessions:\n%s", what, b, text)
		}
	}
}

// checkIsolation runs two sessions side by side: each stores its own cookie
// and localStorage and must see only its own, and keeps its own page.
func checkIsolation(t *testing.T, a, b *mcptest.HTTPClient, pages string) {
	t.Helper()
	both := []*mcptest.HTTPClient{a, b}
	out := navigateAll(t, both, []string{pages + "/set?who=A", pages + "/set?who=B"})
	mustContain(t, "A's navigate", out[0], "stored A", "- Page URL: "+pages+"/set?who=A")
	mustContain(t, "B's navigate", out[1], "stored B", "- Page URL: "+pages+"/set?who=B")

	// Each session still shows its own page.
	mustContain(t, "A's snapshot", a.MustCall(t, "browser_snapshot", nil), "/set?who=A")
	mustContain(t, "B's snapshot", b.MustCall(t, "browser_snapshot", nil), "/set?who=B")

	out = navigateAll(t, both, []string{pages + "/show", pages + "/show"})
	mustContain(t, "A's /show", out[0], "server saw cookie A", "page saw storage A")
	mustNotContain(t, "A's /show", out[0], "cookie B", "storage B")
	mustContain(t, "B's /show", out[1], "server saw cookie B", "page saw storage B")
	mustNotContain(t, "B's /show", out[1], "cookie A", "storage A")
}

func currentGeneration(t *testing.T, h *mcptest.HTTPServer, sid string) *session.Generation {
	t.Helper()
	sess, err := h.Server.Sessions().Get(sid)
	if err != nil {
		t.Fatalf("session %s: %v", sid, err)
	}
	g := sess.Current()
	if g == nil {
		t.Fatal("no live browser generation")
	}
	return g
}

func waitGone(t *testing.T, profile string, d time.Duration) {
	t.Helper()
	testtier.EventuallyState(t, d, "the browser of "+profile+" to be gone", func() (bool, string) {
		pids := session.ProfilePIDs(profile)
		_, err := os.Stat(profile)
		return len(pids) == 0 && os.IsNotExist(err), fmt.Sprintf("pids %v, stat %v", pids, err)
	})
}

// TestHTTPBrowserIsolation: in the default isolation each session has a
// browser process and temporary profile of its own; DELETE closes it.
func TestHTTPBrowserIsolation(t *testing.T) {
	browserEnv(t)
	pages := statePages(t).URL
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs(), OwnBrowser: true})
	a := h.Connect(t, mcptest.ConnectOptions{})
	b := h.Connect(t, mcptest.ConnectOptions{})
	start := time.Now()
	checkIsolation(t, a, b, pages)
	t.Logf("isolation check (2 browser launches): %v", time.Since(start))

	ga, gb := currentGeneration(t, h, a.SessionID), currentGeneration(t, h, b.SessionID)
	if ga.ProfileDir == "" || ga.ProfileDir == gb.ProfileDir {
		t.Fatalf("profiles %q and %q: want two separate ones", ga.ProfileDir, gb.ProfileDir)
	}
	pa, pb := session.ProfilePIDs(ga.ProfileDir), session.ProfilePIDs(gb.ProfileDir)
	if len(pa) == 0 || len(pb) == 0 || pa[0] == pb[0] {
		t.Fatalf("browser processes %v and %v: want one each", pa, pb)
	}

	// DELETE (the client's Close) ends A: browser gone, profile removed
	// by the time the DELETE is answered.
	start = time.Now()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("DELETE closed the browser in %v", time.Since(start))
	waitGone(t, ga.ProfileDir, 0)
	if _, err := h.Server.Sessions().Get(a.SessionID); err == nil {
		t.Fatal("session still registered after DELETE")
	}
	// B is untouched.
	mustContain(t, "B after A's DELETE", navigate(t, b, pages+"/show"), "server saw cookie B")
	if code, v := getReady(t, h); code != 200 || v.Sessions.Active != 1 {
		t.Fatalf("readyz: %d %+v", code, v)
	}
	// Shutdown closes B's browser too.
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, gb.ProfileDir, 0)
}

// TestHTTPIdleSessionExpires: a session idle past the TTL is closed with
// its browser; its ID then gets 404.
func TestHTTPIdleSessionExpires(t *testing.T) {
	browserEnv(t)
	pages := statePages(t).URL
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--http-session-idle-ttl-ms", "1000"), OwnBrowser: true})
	c := h.Connect(t, mcptest.ConnectOptions{})
	// Keep the session busy while its browser launches (longer than the TTL).
	stop := make(chan struct{})
	pinged := make(chan struct{})
	go func() {
		defer close(pinged)
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
				_ = c.Ping(context.Background())
			}
		}
	}()
	navigate(t, c, pages+"/set?who=A")
	close(stop)
	<-pinged
	g := currentGeneration(t, h, c.SessionID)
	if len(g.BrowserPIDs()) == 0 {
		t.Fatal("no browser running")
	}
	start := time.Now()
	waitGone(t, g.ProfileDir, 10*time.Second)
	t.Logf("idle session closed %v after its last request", time.Since(start))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "browser_snapshot"}}); err == nil {
		t.Fatal("a call on the expired session succeeded")
	} else if !strings.Contains(err.Error(), "404") {
		t.Fatalf("call on the expired session: %v, want a 404", err)
	}
	// The profile goes with the browser, before the session's close ends
	// and the registry lets it go: the count follows within the close.
	testtier.EventuallyState(t, 10*time.Second, "readyz to count no session", func() (bool, string) {
		code, v := getReady(t, h)
		return code == 200 && v.Sessions.Active == 0, fmt.Sprintf("%d %+v", code, v)
	})
}

// TestHTTPContextIsolation: in "context" isolation sessions share one
// browser process but not state; a client that vanishes mid-call leaves the
// server serving; shutdown leaves no process or profile.
func TestHTTPContextIsolation(t *testing.T) {
	browserEnv(t)
	pages := statePages(t).URL
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--http-isolation", "context"), OwnBrowser: true})
	a := h.Connect(t, mcptest.ConnectOptions{})
	b := h.Connect(t, mcptest.ConnectOptions{})
	start := time.Now()
	checkIsolation(t, a, b, pages)
	t.Logf("isolation check (1 shared launch): %v", time.Since(start))

	shared := h.Server.SharedBrowser()
	profile := shared.ProfileDir()
	if profile == "" || len(shared.PIDs()) == 0 {
		t.Fatalf("shared browser not found (profile %q)", profile)
	}
	for _, c := range []*mcptest.HTTPClient{a, b} {
		if g := currentGeneration(t, h, c.SessionID); g.ProfileDir != "" {
			t.Fatalf("a context session has a profile dir %q", g.ProfileDir)
		}
	}

	t.Run("client disappears mid-call", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		_, err := a.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "browser_navigate", Arguments: map[string]any{"url": pages + "/slow"}}})
		if err == nil {
			t.Fatal("the call outlived its client")
		}
		// The server and both sessions keep working.
		mustContain(t, "B during A's abandoned call", navigate(t, b, pages+"/show"), "server saw cookie B")
		mustContain(t, "A after its abandoned call", navigate(t, a, pages+"/show"), "server saw cookie A")
	})

	// Ending A closes its context only.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if len(shared.PIDs()) == 0 {
		t.Fatal("the shared browser died with one session")
	}
	mustContain(t, "B after A's DELETE", navigate(t, b, pages+"/show"), "server saw cookie B")

	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, profile, 0)
}

// TestHTTPSessionsInTheGivenBrowser: a server given a browser to share
// (server.Options.Browser, as StartHTTP gives the test binary's) opens each
// HTTP session as a fresh context in it, in either isolation (in "browser"
// isolation only with Options.HTTPInBrowser, as StartHTTP sets): each session
// keeps its own state, none launches a browser, and the browser outlives
// the server. A server that can publish CDP endpoints does not share it.
func TestHTTPSessionsInTheGivenBrowser(t *testing.T) {
	browserEnv(t)
	pages := statePages(t).URL
	shared := mcptest.SharedBrowser(t)
	for _, isolation := range []string{"browser", "context"} {
		t.Run(isolation, func(t *testing.T) {
			h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--http-isolation", isolation)})
			a := h.Connect(t, mcptest.ConnectOptions{})
			b := h.Connect(t, mcptest.ConnectOptions{})
			checkIsolation(t, a, b, pages)
			if got := h.Server.SharedBrowser(); got != shared {
				t.Fatalf("the sessions' shared browser is %p, want the given one %p", got, shared)
			}
			for _, c := range []*mcptest.HTTPClient{a, b} {
				if g := currentGeneration(t, h, c.SessionID); g.ProfileDir != "" {
					t.Fatalf("a session launched a browser of its own (profile %q)", g.ProfileDir)
				}
			}
			profile := shared.ProfileDir()
			if profile == "" || len(shared.PIDs()) == 0 {
				t.Fatalf("the given browser is not running (profile %q)", profile)
			}
			if err := h.Stop(); err != nil {
				t.Fatal(err)
			}
			if shared.ProfileDir() != profile || len(shared.PIDs()) == 0 {
				t.Fatalf("the server's shutdown closed the given browser (profile %q → %q)", profile, shared.ProfileDir())
			}
		})
	}
	t.Run("browser isolation kept for an embedder", func(t *testing.T) {
		// Without Options.HTTPInBrowser, "browser" isolation (the
		// default) keeps a browser process per session.
		h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs(), KeepIsolation: true})
		if got := h.Server.SharedBrowser(); got != nil {
			t.Fatalf("browser isolation shares browser %p without HTTPInBrowser", got)
		}
		h = mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--http-isolation", "context"), KeepIsolation: true})
		if got := h.Server.SharedBrowser(); got != shared {
			t.Fatalf("context isolation's shared browser is %p, want the given one %p", got, shared)
		}
	})
	t.Run("CDP", func(t *testing.T) {
		portRange, _ := freePorts(t, 2)
		h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--cdp-port-range", portRange)})
		if got := h.Server.SharedBrowser(); got != nil {
			t.Fatalf("a server that publishes CDP endpoints shares browser %p: one session's endpoint would reach the others' pages", got)
		}
	})
}

// TestHTTPBinary runs the real binary over HTTP with a token from the
// environment: the token never reaches the log, and SIGTERM closes the
// open session's browser.
func TestHTTPBinary(t *testing.T) {
	t.Parallel() // its own server process, no process-wide state
	mcptest.Chromium(t)
	pages := statePages(t).URL
	env, tmp := serverEnv(t)
	env = append(env, "CLOAK_PLAYWRIGHT_MCP_HTTP_AUTH_TOKEN="+tokenA)
	h := mcptest.StartHTTPBinary(t, mcptest.Binary(t), mcptest.HTTPOptions{
		Args: []string{"--no-download", "--log-level", "debug", "--output-dir", filepath.Join(tmp, "out")},
		Env:  env,
	})
	if r := doRaw(t, h, rawReq{body: initBody}); r.status != http.StatusUnauthorized {
		t.Fatalf("no token: %d", r.status)
	}
	c := h.Connect(t, mcptest.ConnectOptions{Token: tokenA})
	mustContain(t, "navigate", navigate(t, c, pages+"/set?who=A"), "stored A")
	profiles, _ := filepath.Glob(filepath.Join(tmp, "cloakbrowser-mcp-profile-*"))
	if len(profiles) != 1 || len(session.ProfilePIDs(profiles[0])) == 0 {
		t.Fatalf("want one running browser profile under %s, got %v", tmp, profiles)
	}
	start := time.Now()
	if err := h.Stop(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	t.Logf("SIGTERM → exit with one live browser: %v", time.Since(start))
	waitGone(t, profiles[0], 0)
	if m, _ := filepath.Glob(filepath.Join(tmp, "cloakbrowser-mcp-profile-*")); len(m) != 0 {
		t.Fatalf("temp profiles left: %v", m)
	}
	log := h.Stderr.String()
	mustContain(t, "log", log, "serving MCP over streamable HTTP", `"principal":"`+httpguard.PrincipalName(tokenA)+`"`, "session closed")
	if strings.Contains(log, tokenA) || strings.Contains(log, c.SessionID) {
		t.Fatalf("the token or a full session ID is in the log:\n%s", log)
	}
	if strings.Contains(log, "panic") {
		t.Fatalf("server panicked:\n%s", log)
	}
}

// principals is an HTTP server with two bearer tokens, A and B, a client of
// each, and each principal's output directory.
type principals struct {
	h               *mcptest.HTTPServer
	a, b            *mcptest.HTTPClient
	out, dirA, dirB string
}

// twoPrincipals starts it (with extra flags) under a TMPDIR of the test's own.
func twoPrincipals(t *testing.T, extra ...string) principals {
	t.Helper()
	mcptest.Chromium(t)
	_, tmp := serverEnv(t)
	t.Setenv("TMPDIR", tmp)
	p := principals{out: filepath.Join(tmp, "out")}
	p.h = mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs(append([]string{
		"--http-auth-tokens", tokenA + "," + tokenB, "--output-dir", p.out}, extra...)...)})
	p.a = p.h.Connect(t, mcptest.ConnectOptions{Token: tokenA})
	p.b = p.h.Connect(t, mcptest.ConnectOptions{Token: tokenB})
	p.dirA = filepath.Join(p.out, httpguard.PrincipalName(tokenA))
	p.dirB = filepath.Join(p.out, httpguard.PrincipalName(tokenB))
	return p
}
