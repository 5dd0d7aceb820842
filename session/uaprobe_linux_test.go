package session_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// TestPipeUserAgentIsTheDriversRead: the user agent read over our own
// DevTools pipe is the one a Playwright launch of the same binary with the
// same arguments reports, and the probe's browser and profile are gone
// when it returns.
func TestPipeUserAgentIsTheDriversRead(t *testing.T) {
	testtier.BrowserTier(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	bin := cloakbrowser.BinaryInfo{BinaryPath: chromium(t), Engine: cloakbrowser.EngineChromium}
	args := session.Config{Headless: true, NoSandbox: true}.Args(bin)

	ua, err := session.PipeUserAgent(t.Context(), bin.BinaryPath, args, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ua, "Mozilla/5.0 ") || !strings.Contains(ua, "HeadlessChrome/") {
		t.Fatalf("pipe read %q: want a headless browser's user agent", ua)
	}
	if left := cmdlinesContaining(tmp); len(left) > 0 {
		t.Errorf("probe processes left: %q", left)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Errorf("probe left %d entries in TMPDIR: %s", len(ents), ents[0].Name())
	}

	pw, err := mcptest.SharedDriver(t).Get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	br, err := pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath:    playwright.String(bin.BinaryPath),
		Headless:          playwright.Bool(true),
		Args:              args,
		IgnoreDefaultArgs: cloakbrowser.IgnoredDefaultArgs(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = br.Close() }()
	cdp, err := br.NewBrowserCDPSession()
	if err != nil {
		t.Fatal(err)
	}
	v, err := cdp.Send("Browser.getVersion", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := v.(map[string]any)["userAgent"].(string); ua != want {
		t.Errorf("pipe read %q, Playwright's launch %q", ua, want)
	}
}

// TestPipeUserAgentOfNoBrowser: a binary that exits without answering, one
// that never answers (killed at the timeout), and one that writes other
// messages before its answer: the first two are errors the launch falls
// back from, the third is read past.
func TestPipeUserAgentOfNoBrowser(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()

	if _, err := session.PipeUserAgent(ctx, script("exits", "exit 3"), nil, 10*time.Second); err == nil || !strings.Contains(err.Error(), "exited before it answered") {
		t.Errorf("a binary that exits: %v", err)
	}

	silent := script("silent", "exec sleep 31.25")
	if _, err := session.PipeUserAgent(ctx, silent, nil, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("a binary that never answers: %v", err)
	}
	if left := cmdlinesContaining("31.25"); len(left) > 0 {
		t.Errorf("the silent binary is still running: %q", left)
	}

	const ua = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/150.0.0.0 Safari/537.36"
	chatty := script("chatty", `printf 'not json\000{"method":"Target.targetCreated","params":{}}\000{"id":7,"result":{}}\000{"id":1,"result":{"userAgent":"`+ua+`"}}\000' >&4; sleep 0.2`)
	if got, err := session.PipeUserAgent(ctx, chatty, nil, 10*time.Second); err != nil || got != ua {
		t.Errorf("a binary that writes other messages first: %q, %v", got, err)
	}

	failing := script("failing", `printf '{"id":1,"error":{"message":"no such method"}}\000' >&4; sleep 0.2`)
	if _, err := session.PipeUserAgent(ctx, failing, nil, 10*time.Second); err == nil || !strings.Contains(err.Error(), "no such method") {
		t.Errorf("a binary that answers an error: %v", err)
	}
}

// cmdlinesContaining lists the command lines of live processes that hold
// s, other than this one.
func cmdlinesContaining(s string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if bytes.Contains(b, []byte(s)) {
			out = append(out, string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return out
}

// TestLaunchFallsBackFromThePipeRead: a binary whose pipe read fails (this
// wrapper refuses the probe's profile) still gets its headed user agent,
// read through the driver, and its pages send it.
func TestLaunchFallsBackFromThePipeRead(t *testing.T) {
	testtier.BrowserTier(t)
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "chromium-wrapper")
	body := "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *uaprobe-*) exit 7;; esac; done\nexec " + chromium(t) + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := cloakbrowser.BinaryInfo{BinaryPath: wrapper, Engine: cloakbrowser.EngineChromium, Source: cloakbrowser.SourceSystem, CacheRoot: dir}
	cfg := session.Config{
		ResolveBinary: func(context.Context) (cloakbrowser.BinaryInfo, error) { return bin, nil },
		Headless:      true,
		NoSandbox:     true,
	}
	s := session.New(t.Name(), mcptest.SharedDriver(t), cfg)
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	if ua := pageUserAgent(t, s); !headed(ua) {
		t.Errorf("page's user agent %q: want the headed one", ua)
	}
}

// pageUserAgent launches s's browser and returns its current tab's
// navigator.userAgent.
func pageUserAgent(t *testing.T, s *session.Session) string {
	t.Helper()
	g, err := s.Generation(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tab, err := g.CurrentTab(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	v, err := tab.Evaluate(t.Context(), "() => navigator.userAgent")
	if err != nil {
		t.Fatal(err)
	}
	ua, _ := v.(string)
	return ua
}

// headed reports whether ua is a headed Chrome's user agent.
func headed(ua string) bool {
	return strings.Contains(ua, "Chrome/") && !strings.Contains(ua, "Headless")
}
