package mcptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/server"
)

// Notifications records what a server sends a client unasked: log
// messages, progress, list changes.
type Notifications struct {
	mu      sync.Mutex
	list    []mcp.JSONRPCNotification
	changed chan struct{} // closed and replaced on each arrival
}

// Record starts recording c's notifications (mcp-go's OnNotification).
// It calls c.Start (idempotent): mcp-go wires notifications to the client's
// handlers there, and StartBinary starts only the transport.
func Record(c *client.Client) *Notifications {
	n := &Notifications{changed: make(chan struct{})}
	_ = c.Start(context.Background())
	c.OnNotification(func(nt mcp.JSONRPCNotification) {
		n.mu.Lock()
		n.list = append(n.list, nt)
		close(n.changed)
		n.changed = make(chan struct{})
		n.mu.Unlock()
	})
	return n
}

// All returns the notifications of method received so far, in order.
func (n *Notifications) All(method string) []mcp.JSONRPCNotification {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []mcp.JSONRPCNotification
	for _, nt := range n.list {
		if nt.Method == method {
			out = append(out, nt)
		}
	}
	return out
}

// Wait waits up to timeout for a notification that match accepts and
// returns it with everything received before it; it fails the test on
// timeout.
func (n *Notifications) Wait(t testing.TB, timeout time.Duration, what string, match func(mcp.JSONRPCNotification) bool) (mcp.JSONRPCNotification, []mcp.JSONRPCNotification) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		n.mu.Lock()
		for i, nt := range n.list {
			if match(nt) {
				before := append([]mcp.JSONRPCNotification(nil), n.list[:i]...)
				n.mu.Unlock()
				return nt, before
			}
		}
		ch := n.changed
		n.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no %s within %v; got %s", what, timeout, n)
		}
	}
}

func (n *Notifications) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var b strings.Builder
	for _, nt := range n.list {
		p, _ := json.Marshal(nt.Params)
		fmt.Fprintf(&b, "\n  %s %s", nt.Method, Tail(string(p), 300))
	}
	return b.String()
}

// LogText is a notifications/message's level and data (as text).
func LogText(nt mcp.JSONRPCNotification) (level, data string) {
	level, _ = nt.Params.AdditionalFields["level"].(string)
	switch d := nt.Params.AdditionalFields["data"].(type) {
	case string:
		data = d
	default:
		b, _ := json.Marshal(d)
		data = string(b)
	}
	return level, data
}

// CallWithProgress calls a tool with a progressToken in its _meta.
func CallWithProgress(ctx context.Context, c *client.Client, name string, args map[string]any, token any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	if token != nil {
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
	}
	return c.CallTool(ctx, req)
}

// SetLevel sends logging/setLevel.
func SetLevel(ctx context.Context, c *client.Client, level string) error {
	req := mcp.SetLevelRequest{}
	req.Params.Level = mcp.LoggingLevel(level)
	return c.SetLevel(ctx, req)
}

// Raw is the server binary over stdio driven line by line, without a
// client library: for what a client would hide (a response that must never
// come).
type Raw struct {
	// Stderr collects the server's log.
	Stderr *SyncBuffer

	in    io.WriteCloser
	lines chan map[string]any
	mu    sync.Mutex
	seen  []map[string]any
}

// StartRaw runs bin over stdio with o's Args and Env and initializes it
// with protocol 2025-11-25.
func StartRaw(t testing.TB, bin string, o Options) *Raw {
	t.Helper()
	BrowserTier(t)
	cmd := exec.Command(bin, o.Args...)
	cmd.Env = append(os.Environ(), o.Env...)
	cmd.Dir = o.Dir
	r := &Raw{Stderr: &SyncBuffer{}, lines: make(chan map[string]any, 1024)}
	cmd.Stderr = r.Stderr
	cmd.WaitDelay = 5 * time.Second
	proctree.Own(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	r.start(t, in, out, func() error {
		_ = in.Close()
		return cmd.Wait()
	})
	return r
}

// StartRawInProcess is StartRaw for a server in this process, served over
// pipes through the same stdio code path as the binary, on the test
// binary's shared driver and, as StartInProcess, its shared browser unless
// o.OwnBrowser. o.Config, if set, is used instead of parsing o.Args; o.Env
// and o.Dir are not used.
func StartRawInProcess(t testing.TB, o Options) *Raw {
	t.Helper()
	drv, shared, cfg := inProcessSetup(t, o.OwnBrowser, o.Config, o.Args)
	r := &Raw{Stderr: &SyncBuffer{}, lines: make(chan map[string]any, 1024)}
	s, err := server.New(cfg, server.Options{Log: r.Stderr, Driver: drv, Browser: shared})
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	cin, sout := io.Pipe()
	sin, cout := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.ServeStdio(ctx, sin, sout) }()
	r.start(t, cout, cin, func() error {
		_ = cout.Close() // EOF on the server's stdin, as the binary gets
		cancel()
		err := <-served
		_ = sout.Close()
		_ = cin.Close()
		return errors.Join(err, s.Close())
	})
	return r
}

// start reads the server's messages from out, stops the server with stop
// when t ends, and initializes it through in.
func (r *Raw) start(t testing.TB, in io.WriteCloser, out io.Reader, stop func() error) {
	t.Helper()
	r.in = in
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				r.lines <- m
			}
		}
	}()
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Logf("stop server: %v", err)
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", Tail(r.Stderr.String(), 8000))
		}
	})
	r.Send(t, map[string]any{"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": map[string]any{
		"protocolVersion": mcp.ProtocolVersion20251125, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "mcptest-raw", "version": "1"},
	}})
	r.Next(t, 30*time.Second, "initialize response", func(m map[string]any) bool { return m["id"] == "init" })
	r.Send(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
}

// Send writes one message.
func (r *Raw) Send(t testing.TB, msg any) {
	t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("write to server: %v", err)
	}
}

// Next reads messages until one that match accepts, within timeout; every
// message read is kept (Seen).
func (r *Raw) Next(t testing.TB, timeout time.Duration, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case m, ok := <-r.lines:
			if !ok {
				t.Fatalf("server closed stdout before %s", what)
			}
			r.mu.Lock()
			r.seen = append(r.seen, m)
			r.mu.Unlock()
			if match(m) {
				return m
			}
		case <-deadline:
			t.Fatalf("no %s within %v", what, timeout)
		}
	}
}

// Seen returns every message read so far.
func (r *Raw) Seen() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.seen...)
}
