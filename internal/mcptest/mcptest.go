// Package mcptest is this module's test harness: a thin testing.TB wrapper
// over pkg/embed (the public embedding API) that starts a cloakbrowser-mcp
// server — the built binary over stdio, in-process over pipes on the test
// binary's shared Playwright driver, or over Streamable HTTP — connects a
// real mcp-go client, and closes both when the test ends. It also serves
// the fixtures the tests share (hostile pages, a re-rendering app, Redis, a
// remote Chromium, @playwright/mcp and its recorded output).
//
// Every helper that needs a browser, the driver or npm skips its test in
// the unit tier (-short; see internal/testtier). Code outside this module
// uses pkg/embed.
package mcptest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/embed"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// MainPackage is the import path of the server's command.
const MainPackage = "github.com/cloakmcp/cloakbrowser-mcp/cmd/cloakbrowser-mcp"

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
	// buildTemp is the process's temp dir when the package loads: tests
	// point TMPDIR at their own dirs (removed when they end), and the
	// binary must outlive the test that first asked for it.
	buildTemp = os.TempDir()
)

// Binary builds the server binary once per test process and returns its
// path. Set CLOAKBROWSER_MCP_BINARY to use an already built binary.
func Binary(t testing.TB) string {
	t.Helper()
	BrowserTier(t)
	if p := os.Getenv("CLOAKBROWSER_MCP_BINARY"); p != "" {
		return p
	}
	buildOnce.Do(func() {
		// A test process killed before RemoveBinary ran leaves its
		// directory: marked as ours (the server's own temp-dir marker), the
		// next test process removes it, as a server sweeps its temp dirs.
		_, _ = session.SweepStale(buildTemp, zerolog.Nop())
		dir, err := os.MkdirTemp(buildTemp, driver.TempPrefix+"bin-")
		if err != nil {
			buildErr = err
			return
		}
		_ = driver.MarkOwned(dir)
		testtier.AtEnd(RemoveBinary)
		buildPath = filepath.Join(dir, "cloakbrowser-mcp")
		out, err := exec.Command("go", "build", "-o", buildPath, MainPackage).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build %s: %w\n%s", MainPackage, err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// RemoveBinary deletes the binary Binary built; testtier.Main calls it when
// the tests end.
func RemoveBinary() {
	if buildPath != "" {
		_ = os.RemoveAll(filepath.Dir(buildPath))
	}
}

// Options configure a test server.
type Options struct {
	// Args are command-line flags for the server.
	Args []string
	// Env is added to the test process's environment (KEY=value).
	Env []string
	// ProtocolVersion pins the client's protocol; empty means mcp-go's default.
	ProtocolVersion string
	// Dir is the server process's working directory (StartBinary); empty
	// means the test's.
	Dir string
	// Config is used by StartInProcess; if nil, Args are parsed like the
	// binary would parse them.
	Config *config.Config
	// OwnBrowser makes a StartInProcess server launch a browser of its own
	// even when it could open a context in the test binary's shared browser
	// (SharedBrowser): for tests of the launch path, of the browser's
	// processes, or that kill or crash the browser.
	OwnBrowser bool
}

// Client is an initialized MCP client connected to a test server: the
// embedding API's client (E) with the mcp-go client promoted for the
// requests tests make directly.
type Client struct {
	*client.Client
	// E is the embedding API's client the test server was started with.
	E *embed.Client
	// Init is the initialize result.
	Init *mcp.InitializeResult
	// InitDuration is the time from start (process spawn for StartBinary) to
	// the initialize response.
	InitDuration time.Duration
	// Stderr collects the server's log output.
	Stderr *SyncBuffer
	// Pid is the server process id (StartBinary only).
	Pid int
}

// Close closes the client and waits for the server to shut down.
func (c *Client) Close() error { return c.E.Close() }

// SyncBuffer is a bytes.Buffer safe for concurrent writes and reads.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// wrap turns an embedding client into a test Client closed when t ends.
func wrap(t testing.TB, e *embed.Client, stderr *SyncBuffer, start time.Time) *Client {
	c := &Client{Client: e.MCP(), E: e, Init: e.Init, InitDuration: time.Since(start), Stderr: stderr, Pid: e.Pid}
	stopAtEnd(t, c.Close, stderr)
	return c
}

// stopAtEnd stops a test's server when t ends, and shows its log when t
// failed.
func stopAtEnd(t testing.TB, stop func() error, log *SyncBuffer) {
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Logf("stop server: %v", err)
		}
		if t.Failed() {
			t.Logf("server log:\n%s", Tail(log.String(), 8000))
		}
	})
}

// StartBinary runs the server binary over stdio (embed.StartCommand) and
// initializes a client.
func StartBinary(t testing.TB, bin string, o Options) *Client {
	t.Helper()
	BrowserTier(t)
	stderr := &SyncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	e, err := embed.StartCommand(ctx, bin, embed.Options{
		Args: o.Args, Env: o.Env, Dir: o.Dir, Log: stderr, ProtocolVersion: o.ProtocolVersion, ClientName: "mcptest",
	})
	if err != nil {
		t.Fatalf("%v\nserver stderr:\n%s", err, Tail(stderr.String(), 8000))
	}
	return wrap(t, e, stderr, start)
}

// StartInProcess runs the server in this process (embed.Start), on the
// test binary's shared Playwright driver and, where its launch settings
// allow, in a fresh context of the shared browser (SharedBrowser; see
// Options.OwnBrowser), connected over pipes through the same stdio code
// path as the binary.
func StartInProcess(t testing.TB, o Options) *Client {
	t.Helper()
	stderr := &SyncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var shared *session.SharedBrowser
	if !o.OwnBrowser {
		shared = SharedBrowser(t)
	}
	start := time.Now()
	e, err := embed.Start(ctx, embed.Options{
		Args: o.Args, Config: o.Config, Log: stderr, ProtocolVersion: o.ProtocolVersion,
		ClientName: "mcptest", Driver: SharedDriver(t), Browser: shared,
	})
	if err != nil {
		t.Fatalf("%v\nserver log:\n%s", err, Tail(stderr.String(), 8000))
	}
	return wrap(t, e, stderr, start)
}

// Tail returns the last n bytes of s (a server log), marked with a leading
// "…" when it was cut.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// Call calls a tool with a 60 s bound and fails the test on a protocol
// error (a tool error is returned, not fatal).
func (c *Client) Call(t testing.TB, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// MustCall is Call that also fails the test when the tool reports an error.
func (c *Client) MustCall(t testing.TB, name string, args map[string]any) string {
	t.Helper()
	text, err := c.TryCall(name, args)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// TryCall calls a tool with a 60 s bound and returns its text, or an error
// for a protocol error or a tool error. It never fails the test, so it is
// the call to make from a goroutine other than the test's (where t.Fatal
// must not be called).
func (c *Client) TryCall(name string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		return "", fmt.Errorf("call %s: %w", name, err)
	}
	if res.IsError {
		return Text(res), fmt.Errorf("%s returned an error: %s", name, Text(res))
	}
	return Text(res), nil
}

// Text joins the text parts of a result (embed.ResultOf).
func Text(res *mcp.CallToolResult) string { return embed.ResultOf(res).Text }

// Chromium returns the system Chromium used by integration tests, failing
// the test with how to install it when it is missing.
func Chromium(t testing.TB) string {
	t.Helper()
	BrowserTier(t)
	if p := os.Getenv("CLOAKBROWSER_MCP_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium found: install it (Debian: apt-get install -y chromium) or set CLOAKBROWSER_MCP_TEST_CHROMIUM")
	return ""
}
