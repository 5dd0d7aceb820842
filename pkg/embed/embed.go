package embed

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/server"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// DefaultInitTimeout bounds starting a server and its initialize handshake
// when Options.InitTimeout is zero.
const DefaultInitTimeout = 60 * time.Second

// Options configure how a server is started.
type Options struct {
	// Args are the server's command-line flags (e.g. "--caps", "storage").
	// For StartCommand they follow the command's own arguments.
	Args []string
	// Env is added to this process's environment (KEY=value) for the
	// server. If nil, the server sees this process's environment.
	Env []string
	// Dir is the working directory of a StartCommand server. If empty, this
	// process's.
	Dir string
	// Log, if set, also receives the server's log (its stderr). The last
	// 64 KiB are always kept for Client.Log and for start-up errors.
	Log io.Writer
	// InitTimeout bounds start-up and the initialize handshake. If zero,
	// DefaultInitTimeout.
	InitTimeout time.Duration
	// ClientName is the name the client gives in initialize. If empty,
	// "cloakbrowser-mcp-embed".
	ClientName string
	// ProtocolVersion pins the MCP protocol version the client speaks. If
	// empty, mcp-go's default.
	ProtocolVersion string
	// Config configures a Start server instead of Args and Env. If nil,
	// Args and Env are parsed as the binary parses its flags and environment.
	Config *config.Config
	// Driver is a Playwright driver a Start server uses instead of starting
	// its own, and leaves running when it closes: a program or test binary
	// that runs many servers starts one driver (driver.Start) and passes it
	// to each. If nil, each server starts and stops its own.
	Driver *driver.Driver
	// Browser is a browser a Start server's session opens a fresh context
	// in instead of launching its own browser, when the server's launch
	// settings are the browser's (server.Options.Browser); it stays running
	// when the server closes. Make it with session.NewSharedBrowser on the
	// same Driver, and close it after the servers that use it.
	Browser *session.SharedBrowser
}

func (o Options) initTimeout() time.Duration { return initTimeout(o.InitTimeout) }

func (o ConnectOptions) initTimeout() time.Duration { return initTimeout(o.InitTimeout) }

// initTimeout is d, or DefaultInitTimeout when d is not positive.
func initTimeout(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return DefaultInitTimeout
}

// ConnectOptions configure Connect.
type ConnectOptions struct {
	// Headers are sent with every request (e.g. "Authorization": "Bearer …").
	Headers map[string]string
	// InitTimeout bounds the initialize handshake. If zero,
	// DefaultInitTimeout.
	InitTimeout time.Duration
	// ClientName is the name the client gives in initialize. If empty,
	// "cloakbrowser-mcp-embed".
	ClientName string
	// ProtocolVersion pins the MCP protocol version. If empty, mcp-go's
	// default negotiation (2026-07-28 first, which has no HTTP sessions).
	ProtocolVersion string
	// HTTPClient is the base HTTP client (e.g. one that trusts a test
	// certificate). If nil, a client over http.DefaultTransport.
	HTTPClient *http.Client
	// InitializeMeta, if set, is sent as the initialize request's _meta:
	// per-session settings such as
	// {"io.github.swimmwatch/cloakbrowser-mcp": {"cdpEnabled": true}}.
	InitializeMeta map[string]any
}

// ErrClosed is returned by calls on a closed Client.
var ErrClosed = errors.New("embed: client closed")

// Client is an initialized MCP client connected to a server. It is safe
// for concurrent use.
type Client struct {
	mcp *client.Client
	// Server is the server's name and version from initialize.
	Server mcp.Implementation
	// Init is the whole initialize result (protocol version, capabilities).
	Init *mcp.InitializeResult
	// Pid is the server process's id (StartCommand); 0 for Start and Connect.
	Pid int
	log *tailBuffer

	closeOnce sync.Once
	closeErr  error
	closeFn   func() error
	closed    chan struct{}

	http *transport.StreamableHTTP // Connect only

	mu    sync.Mutex
	after []func() error // OnClose functions
}

// OnClose registers fn to run after Close has stopped the server (e.g. to
// remove a directory the server wrote to); its error joins Close's.
func (c *Client) OnClose(fn func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.after = append(c.after, fn)
}

// MCP returns the underlying mcp-go client, for requests the helpers do not
// cover (resources, prompts, notifications).
func (c *Client) MCP() *client.Client { return c.mcp }

// Log returns the last 64 KiB of the server's stderr (empty for Connect).
func (c *Client) Log() string { return c.log.String() }

// Close closes the session and stops what the Client started (for Start and
// StartCommand: the server and its browsers), waiting until they are gone.
// Calling it again returns the first result.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		errs := []error{c.closeFn()}
		c.mu.Lock()
		after := c.after
		c.mu.Unlock()
		for _, fn := range after {
			errs = append(errs, fn())
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

// Result is a tool's answer.
type Result struct {
	// Text joins the text parts of the response with newlines.
	Text string
	// IsError says the tool reported an error (MCP isError).
	IsError bool
	// Images are the image parts, decoded.
	Images []Image
	// Raw is the result as mcp-go decoded it.
	Raw *mcp.CallToolResult
}

// Image is one image part of a Result.
type Image struct {
	MIMEType string
	Data     []byte
}

// ToolError is returned by the typed helpers when the tool reports an
// error; Call returns such results as a Result with IsError instead.
type ToolError struct {
	Tool string
	Text string
}

func (e *ToolError) Error() string { return fmt.Sprintf("%s: %s", e.Tool, excerpt(e.Text, 300)) }

// Call calls a tool. A protocol or transport failure is an error; a tool
// that reports an error is a Result with IsError set.
func (c *Client) Call(ctx context.Context, tool string, args map[string]any) (*Result, error) {
	select {
	case <-c.closed:
		return nil, ErrClosed
	default:
	}
	res, err := c.mcp.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
	if err != nil {
		return nil, fmt.Errorf("call %s: %w", tool, err)
	}
	return ResultOf(res), nil
}

// ResultOf is the Result of a tool's answer as mcp-go decoded it (its text
// parts joined as an agent reads them, its images decoded).
func ResultOf(res *mcp.CallToolResult) *Result {
	r := &Result{IsError: res.IsError, Raw: res}
	var parts []string
	for _, c := range res.Content {
		switch v := c.(type) {
		case mcp.TextContent:
			parts = append(parts, v.Text)
		case mcp.ImageContent:
			if b, err := base64.StdEncoding.DecodeString(v.Data); err == nil {
				r.Images = append(r.Images, Image{MIMEType: v.MIMEType, Data: b})
			}
		}
	}
	r.Text = strings.Join(parts, "\n")
	return r
}

// ListTools returns the names of the tools the server offers.
func (c *Client) ListTools(ctx context.Context) ([]string, error) {
	var names []string
	req := mcp.ListToolsRequest{}
	for {
		res, err := c.mcp.ListTools(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		for _, t := range res.Tools {
			names = append(names, t.Name)
		}
		if res.NextCursor == "" {
			return names, nil
		}
		req.Params.Cursor = res.NextCursor
	}
}

// must turns a tool error into a *ToolError.
func (c *Client) must(ctx context.Context, tool string, args map[string]any) (*Result, error) {
	r, err := c.Call(ctx, tool, args)
	if err != nil {
		return nil, err
	}
	if r.IsError {
		return r, &ToolError{Tool: tool, Text: r.Text}
	}
	return r, nil
}

// Navigate opens url in the current tab (browser_navigate) and returns the
// response, which holds the page's snapshot.
func (c *Client) Navigate(ctx context.Context, url string) (*Result, error) {
	return c.must(ctx, "browser_navigate", map[string]any{"url": url})
}

// Snapshot returns the current page's accessibility snapshot
// (browser_snapshot).
func (c *Client) Snapshot(ctx context.Context) (*Result, error) {
	return c.must(ctx, "browser_snapshot", map[string]any{})
}

// Click clicks target, a ref from the last snapshot ("e12") or a selector
// (browser_click).
func (c *Client) Click(ctx context.Context, target string) (*Result, error) {
	return c.must(ctx, "browser_click", map[string]any{"target": target})
}

// Type types text into target (browser_type), pressing Enter after it when
// submit is set.
func (c *Client) Type(ctx context.Context, target, text string, submit bool) (*Result, error) {
	return c.must(ctx, "browser_type", map[string]any{"target": target, "text": text, "submit": submit})
}

// Evaluate runs a JavaScript function such as "() => document.title" in the
// page (browser_evaluate).
func (c *Client) Evaluate(ctx context.Context, function string) (*Result, error) {
	return c.must(ctx, "browser_evaluate", map[string]any{"function": function})
}

// Screenshot returns a PNG of the viewport (browser_take_screenshot).
func (c *Client) Screenshot(ctx context.Context) ([]byte, error) {
	r, err := c.must(ctx, "browser_take_screenshot", map[string]any{"type": "png", "scale": "css"})
	if err != nil {
		return nil, err
	}
	if len(r.Images) == 0 {
		return nil, fmt.Errorf("browser_take_screenshot returned no image: %s", excerpt(r.Text, 200))
	}
	return r.Images[0].Data, nil
}

// initialize runs the handshake, asking for protocol (if empty, the newest
// revision mcp-go speaks).
func initialize(ctx context.Context, c *client.Client, name, protocol string) (*mcp.InitializeResult, error) {
	if name == "" {
		name = "cloakbrowser-mcp-embed"
	}
	if protocol == "" {
		protocol = mcp.LATEST_PROTOCOL_VERSION
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = protocol
	req.Params.ClientInfo = mcp.Implementation{Name: name, Version: server.Version}
	return c.Initialize(ctx, req)
}

// Start runs a cloakbrowser-mcp server in this process, configured by
// o.Args and o.Env like the binary, and returns a connected Client. The
// server's browser is launched by the first browser call.
func Start(ctx context.Context, o Options) (*Client, error) {
	log := newTailBuffer(o.Log)
	var cfg config.Config
	if o.Config != nil {
		cfg = *o.Config
	} else {
		var rest []string
		var err error
		cfg, rest, err = config.Load(o.Args, envLookup(o.Env), nil)
		if err != nil {
			return nil, fmt.Errorf("server flags: %w", err)
		}
		if len(rest) > 0 {
			return nil, fmt.Errorf("server flags: unexpected argument %q", rest[0])
		}
	}
	s, err := server.New(cfg, server.Options{Log: log, Driver: o.Driver, Browser: o.Browser})
	if err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	cin, sout := io.Pipe()
	sin, cout := io.Pipe()
	sctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.ServeStdio(sctx, sin, sout) }()
	stop := func() error {
		_ = cout.Close()
		cancel()
		err := <-served
		_ = sout.Close()
		_ = cin.Close()
		return errors.Join(err, s.Close())
	}
	tr := transport.NewIO(cin, cout, io.NopCloser(strings.NewReader("")))
	if err := tr.Start(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("start client: %w", err), stop())
	}
	mc := client.NewClient(tr, clientOptions(o.ProtocolVersion)...)
	c := &Client{mcp: mc, log: log, closed: make(chan struct{})}
	c.closeFn = func() error { return errors.Join(ignoreClosed(mc.Close()), stop()) }
	if err := c.init(ctx, o.initTimeout(), o.ClientName, o.ProtocolVersion); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Client) init(ctx context.Context, timeout time.Duration, name, protocol string) error {
	ictx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := initialize(ictx, c.mcp, name, protocol)
	if err != nil {
		_ = c.Close()
		msg := fmt.Sprintf("initialize: %v", err)
		if tail := strings.TrimSpace(c.log.String()); tail != "" {
			msg += "\nserver stderr (last lines):\n" + lastLines(tail, 20)
		}
		return errors.New(msg)
	}
	c.Server, c.Init = res.ServerInfo, res
	return nil
}

func clientOptions(protocol string) []client.ClientOption {
	if protocol == "" {
		return nil
	}
	return []client.ClientOption{client.WithProtocolVersion(protocol)}
}

// StartCommand spawns name with o.Args as a stdio MCP server — this
// project's binary, or any other such as "npx @playwright/mcp@0.0.83" — and
// returns a connected Client. The process runs in its own process group;
// Close ends the whole group, and on Linux it dies with this process.
func StartCommand(ctx context.Context, name string, o Options) (*Client, error) {
	log := newTailBuffer(o.Log)
	env := os.Environ()
	env = append(env, o.Env...)
	var cmd *exec.Cmd
	tr := transport.NewStdioWithOptions(name, env, o.Args,
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			// Not CommandContext: the process must outlive the start-up ctx.
			cmd = exec.Command(command, args...)
			cmd.Env = env
			cmd.Dir = o.Dir
			// exec copies stderr and Wait (in Close) waits for the copy, so
			// a server that dies at start has its last words in the log.
			cmd.Stderr = log
			cmd.WaitDelay = 5 * time.Second
			proctree.Own(cmd) // its own process group, killed with us
			return cmd, nil
		}))
	if err := tr.Start(ctx); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	mc := client.NewClient(tr, clientOptions(o.ProtocolVersion)...)
	c := &Client{mcp: mc, log: log, closed: make(chan struct{})}
	if cmd != nil && cmd.Process != nil {
		c.Pid = cmd.Process.Pid
	}
	c.closeFn = func() error {
		err := ignoreClosed(mc.Close())
		if cmd != nil && cmd.Process != nil {
			proctree.KillGroup(cmd.Process.Pid) // what the server left behind (browsers)
		}
		return err
	}
	if err := c.init(ctx, o.initTimeout(), o.ClientName, o.ProtocolVersion); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return c, nil
}

// Connect joins the Streamable HTTP MCP endpoint at url (e.g.
// http://127.0.0.1:3000/mcp) and returns a Client with a session of its
// own. Close ends the session (DELETE, with the same headers), not the
// server.
func Connect(ctx context.Context, url string, o ConnectOptions) (*Client, error) {
	hc := http.Client{}
	if o.HTTPClient != nil {
		hc = *o.HTTPClient
	}
	if hc.Transport == nil {
		hc.Transport = http.DefaultTransport
	}
	// A RoundTripper rather than mcp-go's header option: that one is not
	// applied to the DELETE that ends the session.
	if len(o.Headers) > 0 {
		hc.Transport = headers{h: o.Headers, next: hc.Transport}
	}
	if o.InitializeMeta != nil {
		hc.Transport = initMeta{meta: o.InitializeMeta, next: hc.Transport}
	}
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPBasicClient(&hc))
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", url, err)
	}
	if err := tr.Start(ctx); err != nil {
		return nil, fmt.Errorf("connect %s: %w", url, err)
	}
	mc := client.NewClient(tr, clientOptions(o.ProtocolVersion)...)
	c := &Client{mcp: mc, log: newTailBuffer(nil), closed: make(chan struct{}), http: tr}
	c.closeFn = func() error { return ignoreClosed(mc.Close()) }
	if err := c.init(ctx, o.initTimeout(), o.ClientName, o.ProtocolVersion); err != nil {
		return nil, fmt.Errorf("connect %s: %w", url, err)
	}
	return c, nil
}

// SessionID is the Mcp-Session-Id the server assigned to a Connect client
// ("" for Start and StartCommand, and for protocol revisions without HTTP
// sessions).
func (c *Client) SessionID() string {
	if c.http == nil {
		return ""
	}
	return c.http.GetSessionId()
}

// headers sets fixed headers on every request.
type headers struct {
	h    map[string]string
	next http.RoundTripper
}

func (t headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header.Set(k, v)
	}
	return t.next.RoundTrip(r)
}

// initMeta adds _meta to the params of an initialize request (mcp-go's
// client has no field for it).
type initMeta struct {
	meta map[string]any
	next http.RoundTripper
}

func (m initMeta) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || r.Body == nil {
		return m.next.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	var msg map[string]any
	if json.Unmarshal(body, &msg) == nil && msg["method"] == string(mcp.MethodInitialize) {
		params, _ := msg["params"].(map[string]any)
		if params == nil {
			params = map[string]any{}
		}
		params["_meta"] = m.meta
		msg["params"] = params
		if body, err = json.Marshal(msg); err != nil {
			return nil, err
		}
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return m.next.RoundTrip(r)
}

func ignoreClosed(err error) error {
	if errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}

// envLookup returns a getenv that sees env (KEY=value) over this process's.
func envLookup(env []string) func(string) string {
	m := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) string {
		if v, ok := m[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
}

const tailMax = 64 << 10

// tailBuffer keeps the last tailMax bytes written and copies them to w.
type tailBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	w  io.Writer
}

func newTailBuffer(w io.Writer) *tailBuffer { return &tailBuffer{w: w} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.w != nil {
		_, _ = t.w.Write(p)
	}
	t.b.Write(p)
	if t.b.Len() > 2*tailMax {
		keep := t.b.Bytes()[t.b.Len()-tailMax:]
		t.b = *bytes.NewBuffer(append([]byte(nil), keep...))
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.b.Bytes()
	if len(b) > tailMax {
		b = b[len(b)-tailMax:]
	}
	return string(b)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func excerpt(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
