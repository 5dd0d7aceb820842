package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

// TestDockerfile runs what the Dockerfile runs, without a container (no
// image registry is reachable here): its RUN'd cloakbrowser-mcp commands,
// then its ENTRYPOINT/CMD with its ENV and a token, and probes its
// HEALTHCHECK URL. It also holds the image to its promises: a non-root
// user, the sandbox on, tini as PID 1, Chromium and Node.js installed.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	// Instructions, with continuation lines joined and comments dropped.
	var ins []string
	var cur string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if s, ok := strings.CutSuffix(line, "\\"); ok {
			cur += s + " "
			continue
		}
		if cur += line; strings.TrimSpace(cur) != "" {
			ins = append(ins, strings.TrimSpace(cur))
		}
		cur = ""
	}
	var env, entry, cmd []string
	var user, health, apt string
	var runs [][]string
	for _, in := range ins {
		op, rest, _ := strings.Cut(in, " ")
		switch op {
		case "ENV":
			env = append(env, strings.Fields(rest)...)
		case "USER":
			user = rest
		case "HEALTHCHECK":
			health = rest
		case "ENTRYPOINT", "CMD":
			var a []string
			if err := json.Unmarshal([]byte(rest), &a); err != nil {
				t.Fatalf("%s is not a JSON array: %v", op, err)
			}
			if op == "CMD" {
				cmd = a
			} else {
				entry = a
			}
		case "RUN":
			if strings.Contains(rest, "apt-get install") {
				apt = rest
			}
			if f := strings.Fields(rest); len(f) > 0 && f[0] == "cloakbrowser-mcp" {
				runs = append(runs, f[1:])
			}
		}
	}
	for _, pkg := range []string{" chromium ", " nodejs ", " tini ", " curl "} {
		if !strings.Contains(apt+" ", pkg) {
			t.Errorf("apt-get install lacks%s: %s", pkg, apt)
		}
	}
	if user == "" || user == "root" || user == "0" {
		t.Errorf("USER %q: the server must not run as root (Chromium's sandbox stays on)", user)
	}
	if strings.Contains(string(b), "--no-sandbox") || strings.Contains(string(b), "NO_SANDBOX") {
		t.Error("the Dockerfile turns Chromium's sandbox off")
	}
	if len(entry) < 3 || entry[0] != "tini" || entry[1] != "--" || entry[2] != "cloakbrowser-mcp" {
		t.Fatalf("ENTRYPOINT %q: want tini -- cloakbrowser-mcp", entry)
	}
	if len(runs) != 1 || !slices.Equal(runs[0], []string{"install"}) {
		t.Fatalf("RUN'd cloakbrowser-mcp commands %q: update this test", runs)
	}
	// The download origin stands in for one the build cannot reach: the
	// build goes on, on Debian's Chromium, and says so.
	dead := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(dead.Close)
	origin := []string{"CLOAKBROWSER_DOWNLOAD_URL=" + dead.URL, "CLOAKBROWSER_CACHE_DIR=" + t.TempDir()}
	bin := mcptest.Binary(t)
	for _, r := range runs {
		c := exec.Command(bin, r...)
		c.Env = append(os.Environ(), origin...)
		c.WaitDelay = 5 * time.Second
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("RUN cloakbrowser-mcp %s: %v\n%s", strings.Join(r, " "), err, out)
		}
		if !strings.Contains(string(out), "fallback") {
			t.Errorf("RUN cloakbrowser-mcp %s does not say it falls back on Debian's Chromium:\n%s", strings.Join(r, " "), out)
		}
	}
	// The image resolves CloakBrowser at start: downloads stay on.
	for _, e := range env {
		if strings.HasPrefix(e, "CLOAK_PLAYWRIGHT_MCP_NO_DOWNLOAD=") || strings.HasPrefix(e, "CLOAK_PLAYWRIGHT_MCP_NO_AUTO_INSTALL=") {
			t.Errorf("ENV %s: the image must resolve CloakBrowser at start", e)
		}
	}

	// The image's command, with its environment; the port is the one
	// StartHTTPBinary picks.
	if !slices.Contains(env, "CLOAK_PLAYWRIGHT_MCP_TRANSPORT=streamable-http") || !slices.Contains(env, "CLOAK_PLAYWRIGHT_MCP_HTTP_HOST=0.0.0.0") {
		t.Fatalf("ENV %q: want Streamable HTTP on 0.0.0.0", env)
	}
	t.Run("refuses to start without a token", func(t *testing.T) {
		c := exec.Command(bin, append(entry[3:], cmd...)...)
		c.Env = append(os.Environ(), env...)
		c.WaitDelay = 5 * time.Second
		out, err := c.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "--http-auth-token") {
			t.Errorf("started on 0.0.0.0 without a token: %v\n%s", err, out)
		}
	})
	const token = "dockerfile-test-token-0123456789abcdef"
	// StartHTTPBinary puts its flags first, so the default command "serve"
	// is left implicit.
	args := append(entry[3:], cmd...)
	if len(args) > 0 && args[0] == "serve" {
		args = args[1:]
	}
	srv := mcptest.StartHTTPBinary(t, bin, mcptest.HTTPOptions{
		Args: args,
		Env:  append(append(env, origin...), "CLOAK_PLAYWRIGHT_MCP_HTTP_AUTH_TOKEN="+token, "CLOAK_PLAYWRIGHT_MCP_OUTPUT_DIR="+t.TempDir()),
	})
	// Started without CloakBrowser and unable to get it, the server says so
	// plainly in its log.
	testtier.Eventually(t, 30*time.Second, "the log saying the server fell back on the system Chromium", func() bool {
		return strings.Contains(srv.Stderr.String(), "CloakBrowser not available: using a system Chromium WITHOUT stealth patches")
	})
	m := regexp.MustCompile(`http://127\.0\.0\.1:8931(/\S+)`).FindStringSubmatch(health)
	if m == nil {
		t.Fatalf("HEALTHCHECK %q: want curl of http://127.0.0.1:8931/…", health)
	}
	u, _ := url.Parse(srv.Base)
	// It listens on every interface and logs [::]; clients come through a
	// published port, with a loopback Host.
	srv.Base = "http://127.0.0.1:" + u.Port()
	srv.URL = srv.Base + "/mcp"
	resp, err := http.Get(srv.Base + m[1])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("health check: %s", resp.Status)
	}
	if _, err := srv.TryConnect(mcptest.ConnectOptions{}); err == nil {
		t.Error("a client without the token was let in")
	}
	c := srv.Connect(t, mcptest.ConnectOptions{Token: token})
	c.Close()
}
