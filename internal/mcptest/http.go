package mcptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/embed"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/server"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// HTTPOptions configure a test server serving Streamable HTTP. The helpers
// always add --transport streamable-http and listen on port 0 of the
// configured host (127.0.0.1 unless Args say otherwise).
type HTTPOptions struct {
	// Args are command-line flags for the server.
	Args []string
	// Env is added to the environment of a StartHTTPBinary server.
	Env []string
	// Config is used by StartHTTP instead of parsing Args.
	Config *config.Config
	// OwnBrowser makes a StartHTTP server launch its sessions' browsers as
	// --http-isolation says even when they could be contexts in the test
	// binary's shared browser (SharedBrowser; server.Options.Browser): for
	// tests of the launch path, of a session's browser processes, or that
	// kill or crash a browser.
	OwnBrowser bool
	// KeepIsolation leaves server.Options.HTTPInBrowser off, as an embedder
	// that gives a browser does by default: in "browser" isolation every
	// session then launches its own.
	KeepIsolation bool
}

// HTTPServer is a server serving Streamable HTTP for a test. It is stopped,
// with its sessions and browsers, when the test ends.
type HTTPServer struct {
	// URL is the MCP endpoint, e.g. http://127.0.0.1:41234/mcp.
	URL string
	// Base is URL's scheme://host:port.
	Base string
	// Server is the in-process server (StartHTTP only).
	Server *server.Server
	// Stderr collects the server's log.
	Stderr *SyncBuffer
	// Pid is the server process (StartHTTPBinary only).
	Pid int
	// HTTPClient, if set, is the base client Connect uses (e.g. one that
	// trusts a test certificate).
	HTTPClient *http.Client

	stopOnce sync.Once
	stopErr  error
	stop     func() error
}

// Stop shuts the server down gracefully and waits for it: SIGTERM for the
// binary, cancelling ServeHTTP and closing the server in-process.
func (h *HTTPServer) Stop() error {
	h.stopOnce.Do(func() { h.stopErr = h.stop() })
	return h.stopErr
}

// StartHTTP runs the server in this process over Streamable HTTP, on the
// test binary's shared Playwright driver and, where the server's settings
// allow (server.Options.Browser), with its sessions as fresh contexts of
// the shared browser (SharedBrowser; see HTTPOptions.OwnBrowser).
func StartHTTP(t testing.TB, o HTTPOptions) *HTTPServer {
	t.Helper()
	drv, shared, cfg := inProcessSetup(t, o.OwnBrowser, o.Config, o.Args)
	cfg.Transport = config.TransportHTTP
	cfg.HTTP.Port = 0
	stderr := &SyncBuffer{}
	s, err := server.New(cfg, server.Options{Log: stderr, NoPrewarm: true, Driver: drv, Browser: shared, HTTPInBrowser: !o.KeepIsolation})
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.HTTP.Host, "0"))
	if err != nil {
		_ = s.Close()
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.ServeHTTPListener(ctx, ln) }()
	deadline := time.Now().Add(10 * time.Second)
	for s.HTTPURL() == "" {
		select {
		case err := <-served:
			cancel()
			_ = s.Close()
			t.Fatalf("serve HTTP: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("HTTP server did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	h := &HTTPServer{URL: s.HTTPURL(), Server: s, Stderr: stderr}
	h.Base = strings.TrimSuffix(h.URL, cfg.HTTP.Endpoint)
	h.stop = func() error {
		cancel()
		err := <-served
		return errors.Join(err, s.Close())
	}
	stopAtEnd(t, h.Stop, stderr)
	return h
}

// StartHTTPBinary runs the server binary over Streamable HTTP on port 0 and
// learns its address from the "serving MCP over streamable HTTP" log line.
func StartHTTPBinary(t testing.TB, bin string, o HTTPOptions) *HTTPServer {
	t.Helper()
	BrowserTier(t)
	stderr := &SyncBuffer{}
	args := append([]string{"--transport", "streamable-http", "--port", "0"}, o.Args...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), o.Env...)
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	proctree.Own(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	h := &HTTPServer{Stderr: stderr, Pid: cmd.Process.Pid}
	h.stop = func() error {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			return err
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			return errors.New("server did not exit within 30s of SIGTERM; killed")
		}
	}
	stopAtEnd(t, h.Stop, stderr)
	deadline := time.After(30 * time.Second)
	for h.URL == "" {
		h.URL = ListenURL(stderr.String())
		if h.URL != "" {
			break
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("server exited before serving: %v\n%s", err, stderr.String())
		case <-deadline:
			t.Fatalf("server did not log its URL in 30s:\n%s", stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if u, err := url.Parse(h.URL); err == nil {
		h.Base = u.Scheme + "://" + u.Host
	}
	return h
}

// ListenURL finds the MCP endpoint URL in a server's JSON log (the
// "serving MCP over streamable HTTP" line), or "" if it is not there yet.
func ListenURL(log string) string {
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l struct {
			Message string `json:"message"`
			URL     string `json:"url"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Message == "serving MCP over streamable HTTP" {
			return l.URL
		}
	}
	return ""
}

// Negotiate, as ConnectOptions.ProtocolVersion, lets mcp-go's client pick
// its protocol (2026-07-28 first, falling back to initialize).
const Negotiate = "negotiate"

// ConnectOptions configure an HTTP client.
type ConnectOptions struct {
	// Token is sent as a Bearer token on every request (DELETE included).
	Token string
	// ProtocolVersion pins the client; empty means 2025-11-25 (a session
	// revision); Negotiate means mcp-go's default negotiation.
	ProtocolVersion string
	// Timeout bounds start and initialize. If zero, 30s.
	Timeout time.Duration
	// InitializeMeta, if set, is sent as the initialize request's _meta
	// (per-session settings such as {"io.github.swimmwatch/cloakbrowser-mcp":
	// {"cdpEnabled": true}}); mcp-go's client has no field for it.
	InitializeMeta map[string]any
}

// HTTPClient is an initialized MCP client over Streamable HTTP.
type HTTPClient struct {
	*Client
	// SessionID is the Mcp-Session-Id the server assigned.
	SessionID string
}

// TryConnect starts and initializes a client (embed.Connect), returning the
// error instead of failing the test. The caller closes the client.
func (h *HTTPServer) TryConnect(o ConnectOptions) (*HTTPClient, error) {
	version := o.ProtocolVersion
	switch version {
	case "":
		version = mcp.ProtocolVersion20251125
	case Negotiate:
		version = ""
	}
	eo := embed.ConnectOptions{
		ProtocolVersion: version, HTTPClient: h.HTTPClient, InitializeMeta: o.InitializeMeta,
		InitTimeout: o.Timeout, ClientName: "mcptest",
	}
	if eo.InitTimeout == 0 {
		eo.InitTimeout = 30 * time.Second
	}
	if o.Token != "" {
		eo.Headers = map[string]string{"Authorization": "Bearer " + o.Token}
	}
	start := time.Now()
	e, err := embed.Connect(context.Background(), h.URL, eo)
	if err != nil {
		return nil, err
	}
	tc := &Client{Client: e.MCP(), E: e, Init: e.Init, InitDuration: time.Since(start), Stderr: h.Stderr}
	return &HTTPClient{Client: tc, SessionID: e.SessionID()}, nil
}

// Connect is TryConnect that fails the test on error and closes the client
// (ending its session with DELETE) when the test ends.
func (h *HTTPServer) Connect(t testing.TB, o ConnectOptions) *HTTPClient {
	t.Helper()
	c, err := h.TryConnect(o)
	if err != nil {
		t.Fatalf("connect %s: %v", h.URL, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// String describes the server for test logs.
func (h *HTTPServer) String() string { return fmt.Sprintf("%s (pid %d)", h.URL, h.Pid) }

// inProcessSetup is what an in-process test server starts from: the test
// binary's shared driver, its shared browser unless own, and the
// configuration (c, or else args parsed as the binary parses them).
func inProcessSetup(t testing.TB, own bool, c *config.Config, args []string) (*driver.Driver, *session.SharedBrowser, config.Config) {
	t.Helper()
	drv := SharedDriver(t)
	var shared *session.SharedBrowser
	if !own {
		shared = SharedBrowser(t)
	}
	if c != nil {
		return drv, shared, *c
	}
	cfg, _, err := config.Load(args, os.Getenv, nil)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return drv, shared, cfg
}
