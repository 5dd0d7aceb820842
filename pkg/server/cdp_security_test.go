package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/httpguard"
)

// devToolsRead is the red team's path to a local file through CDP: open
// DevTools on a page (Target.openDevTools), attach to the frontend's target
// and make InspectorFrontendHost.loadNetworkResource fetch url, which it
// does without the file policy, CORS or the browser's sandbox. It returns
// what the frontend read ("" once a step is refused) and logs each refusal.
func devToolsRead(t *testing.T, browser *cdpConn, pageID, url string) string {
	t.Helper()
	res, errMsg := browser.call(t, "Target.openDevTools", map[string]any{"targetId": pageID})
	if errMsg != "" {
		t.Logf("Target.openDevTools: %s", errMsg)
		return ""
	}
	var opened struct {
		TargetID string `json:"targetId"`
	}
	_ = json.Unmarshal(res, &opened)
	res, errMsg = browser.call(t, "Target.attachToTarget", map[string]any{"targetId": opened.TargetID, "flatten": true})
	if errMsg != "" {
		t.Logf("Target.attachToTarget of the DevTools frontend: %s", errMsg)
		return ""
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(res, &attached)
	u, _ := json.Marshal(url)
	expr := `new Promise(done => {
		const wait = () => {
			if (!window.InspectorFrontendHost || !window.DevToolsAPI) return setTimeout(wait, 50);
			let data = "";
			const write = DevToolsAPI.streamWrite;
			DevToolsAPI.streamWrite = (id, chunk) => id === 4711 ? (data += chunk) : write.call(DevToolsAPI, id, chunk);
			InspectorFrontendHost.loadNetworkResource(` + string(u) + `, "", 4711, r => done(JSON.stringify(r) + data));
		};
		wait();
	})`
	res, errMsg = browser.callOn(t, attached.SessionID, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true})
	if errMsg != "" {
		t.Logf("Runtime.evaluate in the DevTools frontend: %s", errMsg)
		return ""
	}
	var v struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
	}
	_ = json.Unmarshal(res, &v)
	return v.Result.Value
}

// privilegedTargets lists the targets a CDP client is shown with a DevTools
// or browser (WebUI) URL: by Target.getTargets, by discovery events, and by
// /json/list.
func privilegedTargets(t *testing.T, browser *cdpConn, discovery string) []string {
	t.Helper()
	var bad []string
	check := func(where, u string) {
		for _, p := range []string{"devtools:", "chrome-devtools:", "chrome:", "chrome-untrusted:"} {
			if strings.Contains(u, p) {
				bad = append(bad, where+": "+u)
			}
		}
	}
	res := browser.mustCall(t, "Target.getTargets", map[string]any{"filter": []any{map[string]any{}}})
	var list struct {
		TargetInfos []struct {
			Type, URL string
		} `json:"targetInfos"`
	}
	_ = json.Unmarshal(res, &list)
	for _, ti := range list.TargetInfos {
		check("Target.getTargets "+ti.Type, ti.URL)
	}
	browser.mustCall(t, "Target.setDiscoverTargets", map[string]any{"discover": true, "filter": []any{map[string]any{}}})
	browser.mustCall(t, "Browser.getVersion", nil) // the discovery events arrive before its answer
	for _, m := range browser.seen {
		if strings.Contains(m, `"Target.targetCreated"`) || strings.Contains(m, `"Target.attachedToTarget"`) {
			check("event", m)
		}
	}
	resp, err := http.Get(discovery + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var entries []struct{ Type, URL string }
	_ = json.NewDecoder(resp.Body).Decode(&entries)
	for _, e := range entries {
		check("/json/list "+e.Type, e.URL)
	}
	return bad
}

// TestCDPDevToolsRefused (issue 29, item 1): a CDP client cannot open,
// create, navigate to, list or attach to the DevTools frontend or WebUI
// pages, so the red team's path to a local file (Target.openDevTools, then
// InspectorFrontendHost.loadNetworkResource) ends at its first step — with
// the file policy and with --allow-unrestricted-file-access alike. Every
// refusal is the proxy's CDP error; the page and the MCP session go on.
func TestCDPDevToolsRefused(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP-SECRET-DEVTOOLS"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := pages(t)
	for _, mode := range []struct {
		name string
		args []string
	}{{"file policy", nil}, {"unrestricted file access", []string{"--allow-unrestricted-file-access"}}} {
		t.Run(mode.name, func(t *testing.T) {
			portRange, _ := freePorts(t, 1)
			c, _ := inProcess(t, append([]string{"--cdp-enabled", "--cdp-port-range", portRange}, mode.args...)...)
			must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/lab.html"}, "- Page Title: Lab")
			discovery := *readyCDP(t, c).DiscoveryURL
			pageID, pageWS := pageTarget(t, discovery, srv.URL+"/lab.html")
			browser := dialCDPConn(t, browserWS(t, discovery))

			if got := devToolsRead(t, browser, pageID, "file://"+secret); strings.Contains(got, "TOP-SECRET") {
				t.Fatalf("a CDP client read a local file through DevTools: %.200s", got)
			}
			page := dialCDPConn(t, pageWS)
			for _, tc := range []struct {
				name   string
				conn   *cdpConn
				method string
				params map[string]any
				want   string
			}{
				{"Target.openDevTools", browser, "Target.openDevTools", map[string]any{"targetId": pageID}, "-32601 \"Target.openDevTools\" is not forwarded by this CDP proxy"},
				{"Target.getDevToolsTarget", browser, "Target.getDevToolsTarget", map[string]any{"targetId": pageID}, "-32601 \"Target.getDevToolsTarget\" is not forwarded"},
				{"Target.exposeDevToolsProtocol", browser, "Target.exposeDevToolsProtocol", map[string]any{"targetId": pageID}, "-32601"},
				{"createTarget devtools", browser, "Target.createTarget", map[string]any{"url": "devtools://devtools/bundled/devtools_app.html"}, "-32000 Target.createTarget: URL \"devtools://"},
				{"createTarget chrome-devtools", browser, "Target.createTarget", map[string]any{"url": "chrome-devtools://devtools/bundled/inspector.html"}, "are not reachable through this CDP proxy"},
				{"createTarget chrome://inspect", browser, "Target.createTarget", map[string]any{"url": "chrome://inspect/#devices"}, "are not reachable through this CDP proxy"},
				{"createTarget about:inspect", browser, "Target.createTarget", map[string]any{"url": "about:inspect"}, "are not reachable through this CDP proxy"},
				{"Page.navigate devtools", page, "Page.navigate", map[string]any{"url": "devtools://devtools/bundled/devtools_app.html"}, "are not reachable through this CDP proxy"},
				{"Page.navigate chrome://inspect", page, "Page.navigate", map[string]any{"url": "chrome://inspect"}, "are not reachable through this CDP proxy"},
				{"Browser.getBrowserCommandLine", browser, "Browser.getBrowserCommandLine", nil, "-32601"},
				{"SystemInfo.getProcessInfo", browser, "SystemInfo.getProcessInfo", nil, "-32601"},
				{"Tethering.bind", browser, "Tethering.bind", map[string]any{"port": 9999}, "-32601"},
			} {
				if _, errMsg := tc.conn.call(t, tc.method, tc.params); !strings.Contains(errMsg, tc.want) {
					t.Errorf("%s: answered %q; want %q", tc.name, errMsg, tc.want)
				}
			}
			if code, body := putStatus(t, discovery+"/json/new?devtools://devtools/bundled/devtools_app.html"); code != http.StatusForbidden ||
				!strings.Contains(body, "not reachable through this CDP proxy") {
				t.Errorf("PUT /json/new?devtools://…: %d %s", code, body)
			}
			if bad := privilegedTargets(t, browser, discovery); len(bad) > 0 {
				t.Errorf("DevTools or WebUI targets shown to the CDP client:\n%s", strings.Join(bad, "\n"))
			}
			if got := page.eval(t, "location.href"); got != srv.URL+"/lab.html" {
				t.Errorf("after the refusals the page is at %q", got)
			}
			must(t, c, "browser_snapshot", nil, "- Page Title: Lab")
		})
	}
}

// TestCDPPrincipalIsolation (issue 29, item 2): with two bearer tokens,
// each with its own browser and CDP endpoint, B follows the red team's path
// through its DevTools frontend — even told A's internal DevTools port and
// page id — and can neither read A's target list nor close A's page: the
// path ends at Target.openDevTools. Nothing B's CDP client receives names
// A's port or A's page.
func TestCDPPrincipalIsolation(t *testing.T) {
	browserEnv(t)
	const titleA = "A-PRIVATE-TITLE-5f1c"
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		title := "B page"
		if r.URL.Path == "/a" {
			title = titleA
		}
		fmt.Fprintf(w, `<!doctype html><title>%s</title><p>%s</p>`, title, r.URL.Path)
	}))
	t.Cleanup(site.Close)
	portRange, _ := freePorts(t, 2)
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--http-auth-tokens", tokenA+","+tokenB, "--cdp-port-range", portRange)})
	cdpOn := map[string]any{"io.github.cloakmcp/cloakbrowser-mcp": map[string]any{"cdpEnabled": true}}
	a := h.Connect(t, mcptest.ConnectOptions{Token: tokenA, InitializeMeta: cdpOn})
	b := h.Connect(t, mcptest.ConnectOptions{Token: tokenB, InitializeMeta: cdpOn})
	navigateAll(t, []*mcptest.HTTPClient{a, b}, []string{site.URL + "/a", site.URL + "/b"})

	discoveryA, discoveryB := *readyCDP(t, a.Client).DiscoveryURL, *readyCDP(t, b.Client).DiscoveryURL
	sessA, err := h.Server.Sessions().Get(a.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	portA := sessA.CDP().InternalPort()
	pageA, _ := pageTarget(t, discoveryA, site.URL+"/a")
	pageB, _ := pageTarget(t, discoveryB, site.URL+"/b")
	browserB := dialCDPConn(t, browserWS(t, discoveryB))

	internalA := "http://127.0.0.1:" + strconv.Itoa(portA)
	if got := devToolsRead(t, browserB, pageB, internalA+"/json/list"); strings.Contains(got, titleA) || strings.Contains(got, pageA) {
		t.Errorf("B read A's target list through its DevTools frontend: %.300s", got)
	}
	devToolsRead(t, browserB, pageB, internalA+"/json/close/"+pageA)
	for _, tc := range []struct{ method, want string }{
		{"Target.openDevTools", "is not forwarded by this CDP proxy"},
		{"Target.getDevToolsTarget", "is not forwarded by this CDP proxy"},
	} {
		if _, errMsg := browserB.call(t, tc.method, map[string]any{"targetId": pageB}); !strings.Contains(errMsg, tc.want) {
			t.Errorf("B's %s: answered %q", tc.method, errMsg)
		}
	}
	if bad := privilegedTargets(t, browserB, discoveryB); len(bad) > 0 {
		t.Errorf("DevTools or WebUI targets shown to B:\n%s", strings.Join(bad, "\n"))
	}
	// A's page is still there, and A still drives it.
	id, _ := pageTarget(t, discoveryA, site.URL+"/a")
	if id != pageA {
		t.Fatalf("A's page changed: %s, was %s", id, pageA)
	}
	must(t, a.Client, "browser_snapshot", nil, "- Page Title: "+titleA)
	for _, m := range browserB.seen {
		if strings.Contains(m, titleA) || strings.Contains(m, pageA) || strings.Contains(m, "127.0.0.1:"+strconv.Itoa(portA)) {
			t.Fatalf("B's CDP client received a message about A's browser: %.300s", m)
		}
	}
}

// TestCDPFilesPerPrincipal (issue 29, item 3): the CDP file policy's only
// root is the principal's own directory: B cannot give A's file or the
// --secrets file of the working directory to a page, nor send downloads
// into A's directory, the whole output directory or the working directory;
// B's own directory works, and A's file still reaches A's page.
func TestCDPFilesPerPrincipal(t *testing.T) {
	tmp := browserEnv(t)
	wd := filepath.Join(tmp, "wd")
	if err := os.MkdirAll(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	if err := os.WriteFile("secrets.env", []byte("PASSWORD=TOP-SECRET-ENV\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := filepath.Join(wd, "secrets.env")
	out := filepath.Join(tmp, "out")
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>files</title><p>files</p>`)
	}))
	t.Cleanup(site.Close)
	portRange, _ := freePorts(t, 2)
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--http-auth-tokens", tokenA+","+tokenB,
		"--cdp-port-range", portRange, "--output-dir", out, "--secrets", "secrets.env")})
	cdpOn := map[string]any{"io.github.cloakmcp/cloakbrowser-mcp": map[string]any{"cdpEnabled": true}}
	a := h.Connect(t, mcptest.ConnectOptions{Token: tokenA, InitializeMeta: cdpOn})
	b := h.Connect(t, mcptest.ConnectOptions{Token: tokenB, InitializeMeta: cdpOn})
	navigateAll(t, []*mcptest.HTTPClient{a, b}, []string{site.URL + "/a", site.URL + "/b"})
	dirA := filepath.Join(out, httpguard.PrincipalName(tokenA))
	dirB := filepath.Join(out, httpguard.PrincipalName(tokenB))
	secretA := filepath.Join(dirA, "a-secret.txt")
	ownB := filepath.Join(dirB, "b-own.txt")
	for f, body := range map[string]string{secretA: "TOP-SECRET-OF-A", ownB: "b's own"} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, wsA := pageTarget(t, *readyCDP(t, a.Client).DiscoveryURL, site.URL+"/a")
	discoveryB := *readyCDP(t, b.Client).DiscoveryURL
	_, wsB := pageTarget(t, discoveryB, site.URL+"/b")
	pageB := dialCDPConn(t, wsB)
	browserB := dialCDPConn(t, browserWS(t, discoveryB))

	const outside = "outside this session's directory"
	for _, tc := range []struct {
		name string
		file string
	}{
		{"A's file", secretA},
		{"A's file through B's directory", filepath.Join(dirB, "..", filepath.Base(dirA), "a-secret.txt")},
		{"the secrets file in the working directory", secrets},
	} {
		if errMsg := pageB.setFiles(t, tc.file); !strings.Contains(errMsg, outside) {
			t.Errorf("B's DOM.setFileInputFiles of %s: answered %q", tc.name, errMsg)
		}
	}
	if _, errMsg := pageB.call(t, "Input.dispatchDragEvent", map[string]any{"type": "drop", "x": 1, "y": 1,
		"data": map[string]any{"items": []any{}, "files": []string{secretA}, "dragOperationsMask": 1}}); !strings.Contains(errMsg, outside) {
		t.Errorf("B's Input.dispatchDragEvent with A's file: answered %q", errMsg)
	}
	const downloads = "downloads may only go to this session's directory"
	for _, tc := range []struct {
		name, method, dir string
	}{
		{"into A's directory", "Browser.setDownloadBehavior", dirA},
		{"into the output directory", "Browser.setDownloadBehavior", out},
		{"into the working directory", "Browser.setDownloadBehavior", wd},
		{"Page. into A's directory", "Page.setDownloadBehavior", dirA},
	} {
		conn := browserB
		if strings.HasPrefix(tc.method, "Page.") {
			conn = pageB
		}
		if _, errMsg := conn.call(t, tc.method, map[string]any{"behavior": "allow", "downloadPath": tc.dir}); !strings.Contains(errMsg, downloads) {
			t.Errorf("B's %s %s: answered %q", tc.method, tc.name, errMsg)
		}
	}
	if got := pageB.eval(t, `(document.getElementById("cbm-f").files || []).length`); got != "0" {
		t.Fatalf("B's file input holds %s files after the refusals", got)
	}

	// B's own directory works; so does A's for A.
	if errMsg := pageB.setFiles(t, ownB); errMsg != "" {
		t.Fatalf("B's DOM.setFileInputFiles of its own file: %s", errMsg)
	}
	if got := pageB.eval(t, `document.getElementById("cbm-f").files[0].name`); got != "b-own.txt" {
		t.Fatalf("B's file input holds %q", got)
	}
	browserB.mustCall(t, "Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": dirB})
	browserB.mustCall(t, "Browser.setDownloadBehavior", map[string]any{"behavior": "deny"})
	pageA := dialCDPConn(t, wsA)
	if errMsg := pageA.setFiles(t, secretA); errMsg != "" {
		t.Fatalf("A's DOM.setFileInputFiles of its own file: %s", errMsg)
	}
	for _, m := range append(pageB.seen, browserB.seen...) {
		if strings.Contains(m, "TOP-SECRET") {
			t.Fatalf("a secret reached B's CDP client: %.200s", m)
		}
	}
}

// attackPage is a page that tries every way a page has to the DevTools
// endpoint on 127.0.0.1:port — fetch under several host spellings, a
// redirect, a WebSocket to page id's target — and, in ways whose answer a
// page cannot read (iframes, an image, a beacon), asks it to close page id.
// window.attack resolves to one line per readable attempt: "reached",
// "blocked", "open" or "refused".
const attackPage = `<!doctype html><title>attack</title><script>
window.attack = (async () => {
	const q = new URLSearchParams(location.search), port = q.get("port"), id = q.get("id");
	const closeURL = h => "http://" + h + ":" + port + "/json/close/" + id;
	const out = [];
	for (const h of ["127.0.0.1", "localhost", "0.0.0.0", "[::ffff:7f00:1]", "x.localhost", "2130706433"]) {
		try { await fetch("http://" + h + ":" + port + "/json/version", {mode: "no-cors"}); out.push("fetch " + h + ": reached"); }
		catch (e) { out.push("fetch " + h + ": blocked"); }
	}
	try { await fetch("/redir?to=" + encodeURIComponent(closeURL("127.0.0.1")), {mode: "no-cors"}); out.push("redirect: reached"); }
	catch (e) { out.push("redirect: blocked"); }
	out.push("websocket: " + await new Promise(done => {
		try {
			const ws = new WebSocket("ws://127.0.0.1:" + port + "/devtools/page/" + id);
			ws.onopen = () => done("open");
			ws.onerror = () => done("refused");
		} catch (e) { done("refused"); }
	}));
	await Promise.all(["127.0.0.1", "localhost", "0.0.0.0"].map(h => new Promise(done => {
		const f = document.createElement("iframe");
		f.onload = f.onerror = done;
		f.src = closeURL(h);
		document.body.append(f);
	})));
	await new Promise(done => { const i = new Image(); i.onload = i.onerror = done; i.src = closeURL("127.0.0.1"); });
	navigator.sendBeacon(closeURL("127.0.0.1"));
	return out.join("\n");
})();
</script>`

// TestCDPInternalPortUnreachable (issue 29, item 2): no page of any browser
// the server launched reaches a session's internal DevTools endpoint. With
// two bearer tokens, B — with MCP tools alone, no CDP — navigates to A's
// internal port's /json/list and /json/close/<A's page> under every host
// spelling and through a redirect, and opens a page that tries fetch,
// iframes, an image, a beacon and a WebSocket there; A's own page tries the
// same on its own port. Every attempt fails with Chromium's
// ERR_UNSAFE_PORT (the internal port is one Chromium keeps closed to
// pages), nothing B sees names A's page, and A's page stays open.
func TestCDPInternalPortUnreachable(t *testing.T) {
	browserEnv(t)
	const titleA = "A-PRIVATE-TITLE-9d2e"
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redir":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case "/attack":
			fmt.Fprint(w, attackPage)
		case "/a":
			fmt.Fprintf(w, `<!doctype html><title>%s</title><p>a</p>`, titleA)
		default:
			fmt.Fprint(w, `<!doctype html><title>B page</title><p>b</p>`)
		}
	}))
	t.Cleanup(site.Close)
	portRange, _ := freePorts(t, 2)
	h := mcptest.StartHTTP(t, mcptest.HTTPOptions{Args: httpArgs("--http-auth-tokens", tokenA+","+tokenB, "--cdp-port-range", portRange)})
	cdpOn := map[string]any{"io.github.cloakmcp/cloakbrowser-mcp": map[string]any{"cdpEnabled": true}}
	a := h.Connect(t, mcptest.ConnectOptions{Token: tokenA, InitializeMeta: cdpOn})
	b := h.Connect(t, mcptest.ConnectOptions{Token: tokenB})
	navigateAll(t, []*mcptest.HTTPClient{a, b}, []string{site.URL + "/a", site.URL + "/b"})

	discoveryA := *readyCDP(t, a.Client).DiscoveryURL
	sessA, err := h.Server.Sessions().Get(a.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	portA := strconv.Itoa(sessA.CDP().InternalPort())
	pageA, _ := pageTarget(t, discoveryA, site.URL+"/a")
	if code := httpStatus(t, "http://127.0.0.1:"+portA+"/json/version"); code != http.StatusOK {
		t.Fatalf("A's internal endpoint answers a Go client %d", code) // the proxy's path works
	}

	// B navigates there itself.
	for _, host := range []string{"127.0.0.1", "localhost", "0.0.0.0", "[::ffff:7f00:1]", "[::ffff:127.0.0.1]", "x.localhost", "2130706433", "127.1"} {
		for _, path := range []string{"/json/list", "/json/close/" + pageA} {
			u := "http://" + host + ":" + portA + path
			got := mcptest.Text(b.Call(t, "browser_navigate", map[string]any{"url": u}))
			if strings.Contains(got, titleA) || strings.Contains(got, pageA+`"`) || !strings.Contains(got, "ERR_UNSAFE_PORT") {
				t.Errorf("B's browser_navigate %s answered:\n%.600s", u, got)
			}
		}
	}
	redirect := site.URL + "/redir?to=" + url.QueryEscape("http://127.0.0.1:"+portA+"/json/close/"+pageA)
	if got := mcptest.Text(b.Call(t, "browser_navigate", map[string]any{"url": redirect})); !strings.Contains(got, "ERR_UNSAFE_PORT") {
		t.Errorf("B's browser_navigate through a redirect answered:\n%.600s", got)
	}

	// B's page and A's own page try what a page can.
	attack := func(c *mcptest.HTTPClient, who string) {
		t.Helper()
		must(t, c.Client, "browser_navigate", map[string]any{"url": site.URL + "/attack?port=" + portA + "&id=" + pageA}, "- Page Title: attack")
		got := must(t, c.Client, "browser_evaluate", map[string]any{"function": "() => window.attack"})
		for _, line := range []string{"fetch 127.0.0.1: blocked", "fetch localhost: blocked", "fetch 0.0.0.0: blocked",
			"fetch [::ffff:7f00:1]: blocked", "fetch x.localhost: blocked", "fetch 2130706433: blocked", "redirect: blocked", "websocket: refused"} {
			if !strings.Contains(got, line) {
				t.Errorf("%s's page: want %q in:\n%s", who, line, got)
			}
		}
	}
	attack(b, "B")
	attack(a, "A")

	// A's page is still there (the attack page, in the same tab), and A still drives it.
	if id, _ := pageTarget(t, discoveryA, site.URL+"/attack?port="+portA+"&id="+pageA); id != pageA {
		t.Fatalf("A's page is target %s, was %s", id, pageA)
	}
	must(t, a.Client, "browser_navigate", map[string]any{"url": site.URL + "/a"}, "- Page Title: "+titleA)
	if tabs := must(t, b.Client, "browser_tabs", map[string]any{"action": "list"}); strings.Contains(tabs, titleA) {
		t.Fatalf("B's tabs show A's page:\n%s", tabs)
	}
}

// TestInternalDevToolsPortsClosedToPages pins what the internal DevTools
// endpoints rely on: Chromium refuses to load a page from every port they
// may use (ERR_UNSAFE_PORT), so a Chromium that drops one from its list of
// restricted ports fails here rather than opening an endpoint to pages.
func TestInternalDevToolsPortsClosedToPages(t *testing.T) {
	c, _ := inProcess(t)
	for _, tier := range cloakbrowser.InternalDevToolsPorts() {
		for _, p := range tier {
			u := "http://127.0.0.1:" + strconv.Itoa(p) + "/json/list"
			if got := mcptest.Text(c.Call(t, "browser_navigate", map[string]any{"url": u})); !strings.Contains(got, "ERR_UNSAFE_PORT") {
				t.Errorf("browser_navigate %s answered:\n%.300s", u, got)
			}
		}
	}
}
