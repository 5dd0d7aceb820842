package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
)

// upstreamHelp is the verbatim `--help` of @playwright/mcp 0.0.83.
const upstreamHelp = "../../testdata/upstream/playwright-mcp-0.0.83-cli.md" // a copy of the reference facts: upstream's --help, verbatim

// upstreamFlag is one option of upstream's --help.
type upstreamFlag struct {
	name        string // without dashes
	placeholder string // "<path>", "<hosts...>", "" for a switch
	help        string // its description, joined
}

// upstreamFlags parses the help block of the reference file.
func upstreamFlags(t *testing.T) []upstreamFlag {
	t.Helper()
	b, err := os.ReadFile(upstreamHelp)
	if err != nil {
		t.Fatalf("read the upstream reference: %v", err)
	}
	block := string(b)
	i := strings.Index(block, "Options:\n")
	j := strings.Index(block[i:], "```")
	if i < 0 || j < 0 {
		t.Fatal("no --help block in the reference file")
	}
	block = block[i+len("Options:\n") : i+j]
	opt := regexp.MustCompile(`^  (?:-\w, )?--([a-z-]+)(?: (<[^>]+>))?\s*(.*)$`)
	var out []upstreamFlag
	for _, line := range strings.Split(block, "\n") {
		if m := opt.FindStringSubmatch(line); m != nil {
			out = append(out, upstreamFlag{name: m[1], placeholder: m[2], help: m[3]})
		} else if len(out) > 0 {
			out[len(out)-1].help += " " + strings.TrimSpace(line)
		}
	}
	if len(out) < 40 {
		t.Fatalf("parsed only %d flags from the reference", len(out))
	}
	return out
}

// sampleValue picks a valid value for f from its placeholder and the first
// example its description quotes, so the list stays the reference's.
func sampleValue(t *testing.T, f upstreamFlag, dir string) string {
	quoted := regexp.MustCompile(`"([^"]+)"`).FindStringSubmatch(f.help)
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	switch f.name {
	case "config":
		return file("config.json", "{}")
	case "secrets":
		return file("secrets.env", "PASSWORD=hunter2\n")
	case "storage-state":
		return file("state.json", `{"cookies":[],"origins":[]}`)
	case "init-script", "init-page":
		return file("init.js", "window.__x = 1;")
	case "executable-path":
		return mcptest.Chromium(t)
	case "user-data-dir", "output-dir":
		return filepath.Join(dir, f.name)
	case "cdp-endpoint":
		return "http://127.0.0.1:9"
	case "endpoint":
		return "ws://127.0.0.1:9/"
	case "browser", "caps":
		// "possible values: a, b, …": the first.
		if _, v, ok := strings.Cut(f.help, "possible values: "); ok {
			return strings.Trim(strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })[0], `".`)
		}
	}
	switch f.placeholder {
	case "<timeout>", "<bytes>":
		return "1000"
	case "<port>":
		return "0"
	case "<size>":
		return "800x600"
	case "<host>", "<hosts...>":
		return "localhost"
	case "<origins>":
		return "https://example.com"
	case "<headers...>":
		return "X-Test: 1"
	case "<attribute>":
		return "data-qa"
	case "<ua string>":
		return "DropinUA/1.0"
	}
	if quoted != nil {
		return quoted[1]
	}
	t.Fatalf("no sample value for --%s %s", f.name, f.placeholder)
	return ""
}

// refusedFlags are upstream flags that cannot work in a Go server: each
// refuses at start with this part of its sentence.
var refusedFlags = map[string]string{
	"extension":        "needs @playwright/mcp's Node server",
	"init-page":        "cannot run in this Go server",
	"profile-dir-name": "only applies to --extension",
	// Refused, never silently ignored: a session's context is its own.
	"shared-browser-context": "is not supported: every HTTP session has a browser context of its own",
}

// upstreamHiddenFlags are upstream's options its --help leaves out
// (hideHelp in playwright-core 1.64's program.ts) that clients still pass.
var upstreamHiddenFlags = []upstreamFlag{
	{name: "vision", help: "Legacy option, use --caps=vision instead"},
}

// flagBehaviour checks, for an accepted flag, that it does what upstream's
// does: args are the flags the server was started with.
var flagBehaviour = map[string]func(t *testing.T, bin string, env, args []string){
	// --vision is --caps vision: the coordinate tools are listed.
	"vision": func(t *testing.T, bin string, env, args []string) {
		want := []string{"browser_mouse_click_xy", "browser_mouse_move_xy", "browser_mouse_drag_xy", "browser_mouse_down", "browser_mouse_up", "browser_mouse_wheel"}
		has := func(args []string) map[string]bool {
			c := mcptest.StartBinary(t, bin, mcptest.Options{Args: args, Env: env})
			list, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			m := map[string]bool{}
			for _, tool := range list.Tools {
				m[tool.Name] = true
			}
			return m
		}
		with, without := has(args), has(args[:len(args)-1])
		for _, name := range want {
			if !with[name] {
				t.Errorf("--vision: %s is not listed", name)
			}
			if without[name] {
				t.Errorf("without --vision (or --caps vision) %s is listed", name)
			}
		}
		// Wherever --caps stands, as upstream's --vision adds to it.
		if m := has(append([]string{"--caps", "pdf"}, args...)); !m["browser_mouse_click_xy"] || !m["browser_pdf_save"] {
			t.Errorf("--caps pdf --vision: want both the pdf and the vision tools")
		}
	},
}

// TestDropinEveryUpstreamFlag starts the built binary with every flag of
// upstream's --help (a list parsed from the reference file) and its hidden
// ones (upstreamHiddenFlags): each is accepted (the server starts, serves
// and exits at end of input, and does what flagBehaviour says) or refused
// with its documented sentence and exit code 2.
func TestDropinEveryUpstreamFlag(t *testing.T) {
	bin := mcptest.Binary(t)
	env, _ := serverEnv(t)
	env = append(os.Environ(), env...)
	// Each flag is its own short-lived process: four at a time.
	slots := make(chan struct{}, 4)
	extraEnv, _ := serverEnv(t)
	for _, f := range append(upstreamFlags(t), upstreamHiddenFlags...) {
		if f.name == "help" || f.name == "version" {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			slots <- struct{}{}
			defer func() { <-slots }()
			dir := t.TempDir()
			args := []string{"--no-download", "--output-dir", filepath.Join(dir, "out")}
			args = append(args, "--"+f.name)
			if f.placeholder != "" {
				args = append(args, sampleValue(t, f, dir))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Env = env
			cmd.Dir = dir
			// A grandchild that kept our pipes open must not hold Wait.
			cmd.WaitDelay = 5 * time.Second
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if f.name == "port" {
				// --port serves HTTP: accepted when it listens.
				cmd.Args = append(cmd.Args, "--port", "0")
				pr, pw := io.Pipe()
				cmd.Stderr = pw
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				// Close the reader first: once we stop scanning, the copy from
				// the child's stderr would block on pw forever and hold Wait.
				defer func() { _ = cmd.Process.Kill(); pr.Close(); _ = cmd.Wait() }()
				sc := bufio.NewScanner(pr)
				for sc.Scan() {
					if mcptest.ListenURL(sc.Text()) != "" {
						return
					}
				}
				t.Fatalf("--%s: the server did not listen", f.name)
			}
			cmd.Stdin = strings.NewReader("")
			err := cmd.Run()
			code := cmd.ProcessState.ExitCode()
			if want, refused := refusedFlags[f.name]; refused {
				if code != 2 || !strings.Contains(stderr.String(), "--"+f.name) || !strings.Contains(stderr.String(), want) {
					t.Fatalf("--%s: want exit 2 with %q, got %d (%v):\n%s", f.name, want, code, err, stderr.String())
				}
				return
			}
			if code != 0 {
				t.Fatalf("--%s %v: want accepted, got exit %d (%v):\n%s", f.name, args[len(args)-1], code, err, mcptest.Tail(stderr.String(), 2000))
			}
			if check := flagBehaviour[f.name]; check != nil {
				check(t, bin, extraEnv, args)
			}
		})
	}
}

// TestDropinBadInput: a value of the wrong shape refuses to start, naming
// the flag, the value and what is accepted; an unknown flag suggests one.
func TestDropinBadInput(t *testing.T) {
	t.Parallel() // its own server process, no process-wide state
	bin := mcptest.Binary(t)
	env, _ := serverEnv(t)
	env = append(os.Environ(), env...)
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"viewport", []string{"--viewport-size", "12x"}, []string{"--viewport-size", "12x", "WIDTHxHEIGHT"}},
		{"device", []string{"--device", "No Such Phone"}, []string{"--device", "No Such Phone", "not a Playwright device"}},
		{"secrets unreadable", []string{"--secrets", "/nonexistent/s.env"}, []string{"--secrets", "/nonexistent/s.env", "dotenv"}},
		{"init script unreadable", []string{"--init-script", "/nonexistent/i.js"}, []string{"--init-script", "/nonexistent/i.js", "JavaScript file"}},
		{"proxy scheme", []string{"--proxy-server", "ftp://x"}, []string{"--proxy-server", "ftp://x", "socks5://"}},
		{"codegen", []string{"--codegen", "cobol"}, []string{"--codegen", "cobol", "typescript, python, java, csharp, none"}},
		{"firefox", []string{"--browser", "firefox"}, []string{"--browser", "firefox", "drives Chromium"}},
		{"webkit", []string{"--browser", "webkit"}, []string{"--browser", "webkit", "drives Chromium"}},
		{"mobile with device", []string{"--mobile", "--device", "iPhone 15"}, []string{"--mobile", "--device"}},
		{"unknown flag", []string{"--proxy-servr", "x"}, []string{"unknown flag --proxy-servr; did you mean --proxy-server?"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append([]string{"--no-download"}, tc.args...)...)
			cmd.Env = env
			cmd.WaitDelay = 5 * time.Second
			cmd.Stdin = strings.NewReader("")
			out, _ := cmd.CombinedOutput()
			if cmd.ProcessState.ExitCode() == 0 {
				t.Fatalf("%v: accepted:\n%s", tc.args, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Fatalf("%v: output lacks %q:\n%s", tc.args, w, mcptest.Tail(string(out), 2000))
				}
			}
		})
	}
	t.Run("version and help", func(t *testing.T) {
		for _, a := range []string{"--version", "-V"} {
			out, err := exec.Command(bin, a).Output()
			if err != nil || !strings.HasPrefix(string(out), "cloakbrowser-mcp ") {
				t.Fatalf("%s: %v %q", a, err, out)
			}
		}
		out, err := exec.Command(bin, "--help").Output() // stdout only
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"install [--driver-only]", "doctor [--json] [--no-launch]", "--proxy-server", "--cdp-header", "--secrets"} {
			if !strings.Contains(string(out), w) {
				t.Fatalf("--help lacks %q", w)
			}
		}
	})
}

// echoPage answers every request with a page showing the request's
// User-Agent and whether it came through the proxy.
func echoPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	fmt.Fprintf(w, `<!doctype html><title>echo</title><p id="ua">%s</p>`, r.UserAgent())
}

func TestDropinUserAgent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(echoPage))
	t.Cleanup(srv.Close)
	c, _ := inProcess(t, "--user-agent", "DropinUA/1.0 (test)")
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL}, "DropinUA/1.0 (test)")
	must(t, c, "browser_evaluate", map[string]any{"function": "() => navigator.userAgent"}, `"DropinUA/1.0 (test)"`)
}

func TestDropinIgnoreHTTPSErrors(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(echoPage))
	t.Cleanup(srv.Close)
	t.Run("refused without the flag", func(t *testing.T) {
		c, _ := inProcess(t)
		fails(t, c, "browser_navigate", map[string]any{"url": srv.URL}, "ERR_CERT")
	})
	t.Run("accepted with it", func(t *testing.T) {
		c, _ := inProcess(t, "--ignore-https-errors")
		must(t, c, "browser_navigate", map[string]any{"url": srv.URL}, "Page Title: echo")
	})
}

// countingProxy is a forward HTTP proxy that answers every request itself
// with a page naming the host asked for, and counts them.
func countingProxy(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.Method == http.MethodConnect || !r.URL.IsAbs() {
			http.Error(w, "only plain forward requests", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>via proxy</title><p>proxied %s</p>`, r.URL.Host)
	}))
	t.Cleanup(p.Close)
	return p, &n
}

func TestDropinProxyServer(t *testing.T) {
	proxy, n := countingProxy(t)
	c, _ := inProcess(t, "--proxy-server", proxy.URL)
	// A host only the proxy can answer for.
	must(t, c, "browser_navigate", map[string]any{"url": "http://dropin.invalid/page"}, "Page Title: via proxy", "proxied dropin.invalid")
	if n.Load() == 0 {
		t.Fatal("the proxy saw no request")
	}
}

func TestDropinInitScript(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The page's own script reads what the init script left.
		fmt.Fprint(w, `<!doctype html><title>init</title><p id="o"></p><script>document.getElementById('o').textContent = 'seen:' + window.__dropinInit</script>`)
	}))
	t.Cleanup(srv.Close)
	script := filepath.Join(t.TempDir(), "init.js")
	if err := os.WriteFile(script, []byte(`window.__dropinInit = 'before-page-scripts';`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := inProcess(t, "--init-script", script)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL}, "seen:before-page-scripts")
}

func TestDropinStorageState(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ck, _ := r.Cookie("dropin")
		v := "none"
		if ck != nil {
			v = ck.Value
		}
		fmt.Fprintf(w, `<!doctype html><title>state</title><p>cookie=%s</p>`, v)
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	hostname, _, _ := net.SplitHostPort(host)
	state := map[string]any{
		"cookies": []map[string]any{{"name": "dropin", "value": "from-state", "domain": hostname, "path": "/", "expires": -1, "httpOnly": false, "secure": false, "sameSite": "Lax"}},
		"origins": []map[string]any{{"origin": srv.URL, "localStorage": []map[string]string{{"name": "k", "value": "ls-from-state"}}}},
	}
	b, _ := json.Marshal(state)
	file := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := inProcess(t, "--storage-state", file)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL}, "cookie=from-state")
	must(t, c, "browser_evaluate", map[string]any{"function": "() => localStorage.getItem('k')"}, "ls-from-state")
}

func TestDropinDevice(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><meta name="viewport" content="width=device-width"><title>echo</title><p>%s</p>`, r.UserAgent())
	}))
	t.Cleanup(srv.Close)
	c, _ := inProcess(t, "--device", "iPhone 15")
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL}, "iPhone")
	// iPhone 15 in Playwright's descriptors: 393x659 viewport, mobile, touch.
	must(t, c, "browser_evaluate", map[string]any{"function": "() => [innerWidth, navigator.maxTouchPoints > 0, navigator.userAgent.includes('iPhone')].join(',')"}, "393,true,true")
}

func TestDropinBlockedOrigins(t *testing.T) {
	var blockedHits atomic.Int64
	blocked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		blockedHits.Add(1)
		echoPage(w, r)
	}))
	t.Cleanup(blocked.Close)
	var hits atomic.Int64
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintf(w, `<!doctype html><title>ok</title><p id="r">pending</p><script>
fetch(%q).then(() => r.textContent = 'fetched', () => r.textContent = 'fetch blocked')</script>`, blocked.URL)
	}))
	t.Cleanup(allowed.Close)
	c, _ := inProcess(t, "--blocked-origins", blocked.URL)
	must(t, c, "browser_navigate", map[string]any{"url": allowed.URL}, "Page Title: ok")
	must(t, c, "browser_wait_for", map[string]any{"text": "fetch blocked"})
	// Last: the error page of a blocked navigation may commit after the
	// call returned and interrupt a navigation that follows it.
	fails(t, c, "browser_navigate", map[string]any{"url": blocked.URL}, "Navigation to "+blocked.URL)
	if hits.Load() == 0 || blockedHits.Load() != 0 {
		t.Fatalf("requests: allowed origin %d (want > 0), blocked origin %d (want 0)", hits.Load(), blockedHits.Load())
	}
}

func TestDropinCDPEndpoint(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(echoPage))
	t.Cleanup(srv.Close)
	endpoint := mcptest.RemoteChromium(t)
	c, _ := inProcess(t, "--cdp-endpoint", endpoint, "--cdp-header", "X-Dropin: 1")
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/remote"}, "Page Title: echo")
	// The page is in the remote browser.
	resp, err := http.Get(endpoint + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), srv.URL+"/remote") {
		t.Fatalf("the remote browser has no page at %s/remote:\n%s", srv.URL, body)
	}
}

// TestDropinCDPEndpointDown: an endpoint that does not answer fails the
// first browser call within --cdp-timeout with a clear error; the next call
// tries again (and, once the browser answers there, attaches).
func TestDropinCDPEndpointDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c, _ := inProcess(t, "--cdp-endpoint", "http://"+addr, "--cdp-timeout", "3000")
	for i := 0; i < 2; i++ {
		fails(t, c, "browser_navigate", map[string]any{"url": "about:blank"}, "connect to the browser at http://"+addr)
	}
}

// runServer starts the Playwright driver's own `run-server` on loopback and
// returns its ws:// endpoint.
func runServer(t *testing.T) string {
	t.Helper()
	o := driver.Options{}.Resolved()
	node := o.NodePath
	if node == "" {
		node = "node"
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, o.CLIPath(), "run-server", "--port", "0", "--host", "127.0.0.1", "--unsafe")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start run-server (%s %s): %v; install the driver with `cloakbrowser-mcp install --driver-only`", node, o.CLIPath(), err)
	}
	t.Cleanup(func() {
		cancel()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if ep, ok := strings.CutPrefix(sc.Text(), "Listening on "); ok {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return strings.TrimSpace(ep)
		}
	}
	t.Fatal("run-server did not print its endpoint")
	return ""
}

func TestDropinEndpoint(t *testing.T) {
	testtier.BrowserTier(t)
	srv := httptest.NewServer(http.HandlerFunc(echoPage))
	t.Cleanup(srv.Close)
	ep := runServer(t)
	launch, _ := json.Marshal(map[string]any{"executablePath": mcptest.Chromium(t), "headless": true, "args": []string{"--no-sandbox"}})
	c, _ := inProcess(t, "--endpoint", ep, "--remote-header", "x-playwright-launch-options: "+string(launch), "--user-agent", "ViaRunServer/1")
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL}, "Page Title: echo", "ViaRunServer/1")
}
