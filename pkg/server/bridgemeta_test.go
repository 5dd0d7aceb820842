package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/httpguard"
)

// The bridge's per-session settings (initialize _meta): one test per key,
// over Streamable HTTP with a real browser.

const bridgeMetaKey = "io.github.swimmwatch/cloakbrowser-mcp"

// withSettings is an initialize _meta carrying the bridge object m.
func withSettings(m map[string]any) map[string]any { return map[string]any{bridgeMetaKey: m} }

// sharesBrowser reports whether the session of c is a context in the
// server's shared browser.
func sharesBrowser(t *testing.T, h *mcptest.HTTPServer, c *mcptest.HTTPClient) bool {
	t.Helper()
	sess, err := h.Server.Sessions().Get(c.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	return sess.Config().Shared != nil
}

// initRefused sends an initialize with the bridge object m (as token) and
// returns the JSON-RPC error message of its refusal; it fails the test if
// the initialize was accepted or the refusal was not a 400 with
// INVALID_PARAMS. (mcp-go's client reports a 4xx initialize as "likely a
// legacy SSE server", hiding the message, so the request is sent raw.)
func initRefused(t *testing.T, h *mcptest.HTTPServer, token string, m map[string]any) string {
	t.Helper()
	meta, err := json.Marshal(withSettings(m))
	if err != nil {
		t.Fatal(err)
	}
	r := doRaw(t, h, rawReq{token: token, body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},` +
		`"clientInfo":{"name":"raw","version":"1"},"_meta":` + string(meta) + `}}`})
	code, msg := r.rpcError()
	if r.status != http.StatusBadRequest || code != mcp.INVALID_PARAMS || r.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("initialize with %v: %d %s", m, r.status, r.body)
	}
	return msg
}

func TestBridgeMetaProxyServer(t *testing.T) {
	browserEnv(t)
	proxy, seen := recordingProxy(t)
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs()})
	a := h.Connect(t, mcptest.ConnectOptions{InitializeMeta: map[string]any{
		bridgeMetaKey:   map[string]any{"proxyServer": proxy.URL},
		"com.example/x": map[string]any{"cdpEnabled": true}, // another program's: ignored
	}})
	// A host only the proxy can answer for.
	must(t, a.Client, "browser_navigate", map[string]any{"url": "http://meta.invalid/page"}, "Page Title: via proxy", "proxied meta.invalid")
	if !slices.Contains(seen(), "GET http://meta.invalid/page") {
		t.Fatalf("the proxy did not see the request: %v", seen())
	}
	if sharesBrowser(t, h, a) {
		t.Fatal("a session with its own proxy shares the browser of sessions without it")
	}
	mustContain(t, "log", h.Stderr.String(), "keys that are not this server's", "com.example/x")

	// A session without the setting does not get it.
	b := h.Connect(t, mcptest.ConnectOptions{})
	fails(t, b.Client, "browser_navigate", map[string]any{"url": "http://meta.invalid/b-only"}, "ERR_NAME_NOT_RESOLVED")
	for _, u := range seen() {
		if strings.Contains(u, "/b-only") {
			t.Fatalf("a session without proxyServer went through the other session's proxy: %v", seen())
		}
	}
}

// recordingProxy is countingProxy that remembers the URLs asked for.
func recordingProxy(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var seen []string
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.String())
		mu.Unlock()
		if r.Method == http.MethodConnect || !r.URL.IsAbs() {
			http.Error(w, "only plain forward requests", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>via proxy</title><p>proxied %s</p>`, r.URL.Host)
	}))
	t.Cleanup(p.Close)
	return p, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

func TestBridgeMetaProxyBypass(t *testing.T) {
	browserEnv(t)
	proxy, seen := recordingProxy(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>direct</title><p>served by the site</p>`)
	}))
	t.Cleanup(site.Close)
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs()})

	// Without a bypass even loopback goes through the proxy.
	all := h.Connect(t, mcptest.ConnectOptions{InitializeMeta: withSettings(map[string]any{"proxyServer": proxy.URL})})
	must(t, all.Client, "browser_navigate", map[string]any{"url": site.URL + "/proxied"}, "Page Title: via proxy")
	if !slices.Contains(seen(), "GET "+site.URL+"/proxied") {
		t.Fatalf("the proxy did not see the request: %v", seen())
	}

	byp := h.Connect(t, mcptest.ConnectOptions{InitializeMeta: withSettings(map[string]any{"proxyServer": proxy.URL, "proxyBypass": "127.0.0.1"})})
	must(t, byp.Client, "browser_navigate", map[string]any{"url": site.URL + "/bypassed"}, "Page Title: direct")
	must(t, byp.Client, "browser_navigate", map[string]any{"url": "http://meta.invalid/"}, "Page Title: via proxy")
	got := seen()
	if !slices.Contains(got, "GET http://meta.invalid/") {
		t.Fatalf("the proxy did not see the request for a host not bypassed: %v", got)
	}
	for _, u := range got {
		if strings.Contains(u, "/bypassed") {
			t.Fatalf("the proxy saw the request for a bypassed host: %v", got)
		}
	}
}

// cookiePages sets a persistent cookie on /set and shows the one the server
// receives on /show.
func cookiePages(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/set", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "who", Value: r.URL.Query().Get("who"), Path: "/", MaxAge: 3600})
		fmt.Fprint(w, `<!doctype html><title>Set</title><p>set</p>`)
	})
	mux.HandleFunc("/show", func(w http.ResponseWriter, r *http.Request) {
		seen := "none"
		if c, err := r.Cookie("who"); err == nil {
			seen = c.Value
		}
		fmt.Fprintf(w, `<!doctype html><title>Show</title><p>server saw cookie %s</p>`, seen)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestBridgeMetaUserDataDir(t *testing.T) {
	tmp := browserEnv(t)
	site := cookiePages(t)
	out := filepath.Join(tmp, "out")
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--output-dir", out, "--http-auth-tokens", tokenA+","+tokenB)})
	profile := withSettings(map[string]any{"userDataDir": "profiles/shop"})
	dirA := filepath.Join(out, httpguard.PrincipalName(tokenA), "profiles", "shop")

	a := h.Connect(t, mcptest.ConnectOptions{Token: tokenA, InitializeMeta: profile})
	must(t, a.Client, "browser_navigate", map[string]any{"url": site.URL + "/set?who=alice"}, "Page Title: Set")
	if sharesBrowser(t, h, a) {
		t.Fatal("a session with a profile of its own shares a browser")
	}
	if _, err := os.Stat(filepath.Join(dirA, "Default")); err != nil {
		t.Fatalf("the profile is not in the principal's directory: %v", err)
	}

	t.Run("in use", func(t *testing.T) {
		msg := initRefused(t, h, tokenA, map[string]any{"userDataDir": "profiles/shop"})
		mustContain(t, "refusal", msg, `_meta["`+bridgeMetaKey+`"].userDataDir: `, "is in use by another session")
	})
	t.Run("outside the policy", func(t *testing.T) {
		for name, dir := range map[string]string{
			"another principal's profile": dirA,
			"another principal's dir":     filepath.Join(out, httpguard.PrincipalName(tokenA), "p2"),
			"outside the output dir":      filepath.Join(tmp, "elsewhere"),
			"dot-dot":                     "../../elsewhere",
			"the area itself":             ".",
		} {
			if msg := initRefused(t, h, tokenB, map[string]any{"userDataDir": dir}); !strings.Contains(msg, `_meta["`+bridgeMetaKey+`"].userDataDir: `) {
				t.Errorf("%s: want a refusal naming userDataDir, got %q", name, msg)
			} else {
				t.Logf("%s: %s", name, msg)
			}
		}
		if _, err := os.Stat(filepath.Join(tmp, "elsewhere")); err == nil {
			t.Fatal("a refused profile directory was created")
		}
	})

	// The cookie is in the directory: a later session on it sees it.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a2 := h.Connect(t, mcptest.ConnectOptions{Token: tokenA, InitializeMeta: profile})
	must(t, a2.Client, "browser_navigate", map[string]any{"url": site.URL + "/show"}, "server saw cookie alice")
	// The same name for another principal is another directory.
	b := h.Connect(t, mcptest.ConnectOptions{Token: tokenB, InitializeMeta: profile})
	must(t, b.Client, "browser_navigate", map[string]any{"url": site.URL + "/show"}, "server saw cookie none")
}

func TestBridgeMetaContextOptions(t *testing.T) {
	browserEnv(t)
	site := cookiePages(t)
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs()})
	const read = `() => [navigator.language, Intl.DateTimeFormat().resolvedOptions().timeZone, innerWidth, innerHeight, matchMedia("(prefers-color-scheme: dark)").matches].join(",")`

	a := h.Connect(t, mcptest.ConnectOptions{InitializeMeta: withSettings(map[string]any{"contextOptions": map[string]any{
		"locale": "de-DE", "timezoneId": "Pacific/Chatham", "viewport": map[string]any{"width": 801, "height": 603}, "colorScheme": "dark",
	}})})
	must(t, a.Client, "browser_navigate", map[string]any{"url": site.URL + "/show"}, "Page Title: Show")
	must(t, a.Client, "browser_evaluate", map[string]any{"function": read}, `"de-DE,Pacific/Chatham,801,603,true"`)

	// Context-level options alone keep the shared browser.
	b := h.Connect(t, mcptest.ConnectOptions{InitializeMeta: withSettings(map[string]any{"contextOptions": map[string]any{
		"locale": "fr-FR", "viewport": map[string]any{"width": 640, "height": 480},
	}})})
	if !sharesBrowser(t, h, b) {
		t.Fatal("a session with only context options launched a browser of its own")
	}
	must(t, b.Client, "browser_navigate", map[string]any{"url": site.URL + "/show"}, "Page Title: Show")
	out := must(t, b.Client, "browser_evaluate", map[string]any{"function": read}, `"fr-FR,`, `,640,480,`)
	mustNotContain(t, "another session's page", out, "Pacific/Chatham")

	// A session without them has neither.
	c := h.Connect(t, mcptest.ConnectOptions{})
	must(t, c.Client, "browser_navigate", map[string]any{"url": site.URL + "/show"}, "Page Title: Show")
	out = must(t, c.Client, "browser_evaluate", map[string]any{"function": read})
	mustNotContain(t, "a session without context options", out, "de-DE", "fr-FR", "Pacific/Chatham", ",801,603,", ",640,480,")
}

// xvfb starts a virtual display for the test and points the browsers we
// launch at it (DISPLAY: they inherit our environment).
func xvfb(t *testing.T) {
	t.Helper()
	bin, err := exec.LookPath("Xvfb")
	if err != nil {
		t.Fatal("Xvfb not found: run .ci/deps (apt-get install xvfb); a headed browser needs a display")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(bin, "-displayfd", "3", "-screen", "0", "1280x1024x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	proctree.Own(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	num, err := bufio.NewReader(r).ReadString('\n') // the display, once it accepts clients
	if err != nil {
		t.Fatalf("Xvfb did not start: %v", err)
	}
	t.Setenv("DISPLAY", ":"+strings.TrimSpace(num))
}

func TestBridgeMetaHeadless(t *testing.T) {
	browserEnv(t)
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs()})
	on := h.Connect(t, mcptest.ConnectOptions{InitializeMeta: withSettings(map[string]any{"headless": true})})
	if !sharesBrowser(t, h, on) {
		t.Fatal("headless: true (the server's own setting) launched a browser of its own")
	}

	t.Run("no display", func(t *testing.T) {
		t.Setenv("DISPLAY", "")
		t.Setenv("WAYLAND_DISPLAY", "")
		mustContain(t, "refusal", initRefused(t, h, "", map[string]any{"headless": false}), `.headless: false needs a display`)
	})

	xvfb(t)
	off := h.Connect(t, mcptest.ConnectOptions{InitializeMeta: withSettings(map[string]any{"headless": false})})
	if sharesBrowser(t, h, off) {
		t.Fatal("headless: false shares the headless browser")
	}
	must(t, off.Client, "browser_navigate", map[string]any{"url": "about:blank"})
	sess, err := h.Server.Sessions().Get(off.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	g := sess.Current()
	if g == nil || g.ProfileDir == "" {
		t.Fatal("the session has no browser of its own")
	}
	var main []string
	for _, p := range proctree.WithArg("--user-data-dir=" + g.ProfileDir) {
		if !slices.ContainsFunc(p.Args, func(a string) bool { return strings.HasPrefix(a, "--type=") }) {
			main = p.Args
		}
	}
	if main == nil {
		t.Fatal("the session's browser process was not found")
	}
	if slices.ContainsFunc(main, func(a string) bool { return strings.HasPrefix(a, "--headless") }) {
		t.Fatalf("headless: false launched a headless browser: %v", main)
	}
}

// TestBridgeMetaRefused: each setting this server cannot honour, and each
// bad value, refuses the initialize with a JSON-RPC error naming the key
// and saying what to do, and leaves no session behind.
func TestBridgeMetaRefused(t *testing.T) {
	tmp := browserEnv(t)
	out := filepath.Join(tmp, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tmp, filepath.Join(out, "link")); err != nil {
		t.Fatal(err)
	}
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--output-dir", out)})
	cases := []struct {
		name string
		m    map[string]any
		want string
	}{
		{"proxyServer scheme", map[string]any{"proxyServer": "ftp://p:1"}, `.proxyServer: "ftp://p:1" must be http://, https://, socks4:// or socks5:// host:port`},
		{"proxyServer type", map[string]any{"proxyServer": 8080}, `.proxyServer: must be a non-empty string`},
		{"proxyBypass alone", map[string]any{"proxyBypass": "a.example"}, `.proxyBypass: needs proxyServer in the same _meta`},
		{"headless type", map[string]any{"headless": "false"}, `.headless: must be true or false`},
		{"geoipProxyMatch", map[string]any{"geoipProxyMatch": true}, `.geoipProxyMatch: is not supported (as --geoip-proxy-match)`},
		{"humanize", map[string]any{"humanize": true}, `.humanize: is not supported`},
		{"humanPreset", map[string]any{"humanPreset": "careful"}, `.humanPreset: is not supported: it applies only with humanize`},
		{"extensionPaths", map[string]any{"extensionPaths": []string{"/ext"}}, `.extensionPaths: is not supported`},
		{"extensionMode", map[string]any{"extensionMode": "extension"}, `.extensionMode: is not supported (as --extension)`},
		{"profileDirName", map[string]any{"profileDirName": "Profile 1"}, `.profileDirName: is not supported (as --profile-dir-name)`},
		{"contextOptions storageState", map[string]any{"contextOptions": map[string]any{"storageState": "/etc/passwd"}}, `.contextOptions: key "storageState" is not accepted per session`},
		{"contextOptions proxy", map[string]any{"contextOptions": map[string]any{"proxy": map[string]any{"server": "http://p:1"}}}, `.contextOptions: key "proxy" is not accepted per session`},
		{"contextOptions viewport", map[string]any{"contextOptions": map[string]any{"viewport": map[string]any{"width": 0, "height": 10}}}, `.contextOptions: viewport must have a positive width and height`},
		{"contextOptions type", map[string]any{"contextOptions": map[string]any{"locale": 5}}, `.contextOptions: key "locale" must be a string, got number 5`},
		{"userDataDir in a principal's directory", map[string]any{"userDataDir": "t-0123456789ab/p"}, `.userDataDir: "t-0123456789ab/p" is in another principal's directory`},
		{"userDataDir through a symlink", map[string]any{"userDataDir": "link/p"}, `.userDataDir: create "link/p" in `},
		{"userDataDir outside", map[string]any{"userDataDir": "/etc/p"}, `.userDataDir: file "/etc/p" is outside the output directory`},
		{"userDataDir type", map[string]any{"userDataDir": true}, `.userDataDir: must be a non-empty string`},
		{"typo", map[string]any{"userdatadir": "p"}, `.userdatadir: is not a setting of this server; did you mean "userDataDir"?`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg := initRefused(t, h, "", tc.m)
			if want := `initialize _meta["` + bridgeMetaKey + `"]` + tc.want; !strings.Contains(msg, want) {
				t.Fatalf("error %q\nlacks %q", msg, want)
			}
		})
	}
	if st := h.Server.Sessions().Stats(); st.Active != 0 || st.Pending != 0 {
		t.Fatalf("refused initializes left sessions: %+v", st)
	}
	if _, err := os.Stat(filepath.Join(tmp, "p")); err == nil {
		t.Fatal("a profile directory was made through the symlink")
	}
	// With --output-max-size a profile would be evicted file by file.
	h2 := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--output-max-size", "1000000")})
	mustContain(t, "refusal", initRefused(t, h2, "", map[string]any{"userDataDir": "p"}), ".userDataDir: is refused on this server: --output-max-size")
}
