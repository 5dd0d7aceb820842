package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/embed"
)

const (
	upstreamPackage = mcptest.UpstreamPackage
	upstreamVersion = mcptest.UpstreamVersion
	serverOurs      = "ours"
	serverUpstream  = "upstream"
)

// serverSpec says how to start one of the two servers. Args gets the
// process's own output directory.
type serverSpec struct {
	Name    string
	Command string
	Args    func(outDir string) []string
	Env     []string
}

// buildOurs compiles the server into dir.
func buildOurs(ctx context.Context, root, dir string, log io.Writer) (string, error) {
	bin := filepath.Join(dir, "cloakbrowser-mcp")
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/cloakbrowser-mcp")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/cloakbrowser-mcp in %s: %w", root, err)
	}
	return bin, nil
}

// installDriver makes sure our server's Playwright driver is installed, so
// no process in the measured runs spends time installing it.
func installDriver(ctx context.Context, bin string, args []string, log io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"install", "--driver-only"}, args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s install --driver-only: %w", bin, err)
	}
	return nil
}

// proc is one running server with an initialized MCP client.
type proc struct {
	spec serverSpec
	// client is the embedding client's MCP client: close closes only it
	// (not embed's Close, which also kills the process group) to see what
	// outlives the server.
	client *client.Client
	pid    int
	marker string // markerEnv=value
	dir    string // working directory (upstream's workspace root)
	outDir string
	tmpDir string
	stderr *mcptest.SyncBuffer
	tools  map[string]mcp.Tool
	// InitDur is spawn → initialize response.
	InitDur time.Duration
	// ShutdownDur is stdin closed → every process of the server gone; zero
	// if something had to be killed.
	ShutdownDur time.Duration
	// measured marks a process whose figures count (not the warm-up).
	measured bool
	// dump, if set, receives every call and, on close, the server's stderr.
	dump  string
	calls int
	// dumpNote, if set, adds a line about the world to each dumped call.
	dumpNote func() string
}

// errMissingTool marks a tool the server does not offer; its rows are n/a.
var errMissingTool = errors.New("tool not offered by this server")

// startProc spawns a server over stdio in a fresh working directory under
// base and initializes an MCP client; both servers go through this same
// code so their timings compare.
func startProc(ctx context.Context, spec serverSpec, base, marker, dump string, timeout time.Duration) (*proc, error) {
	dir, err := os.MkdirTemp(base, spec.Name[:1]) // short: see base in main.go
	if err != nil {
		return nil, err
	}
	p := &proc{spec: spec, dir: dir, outDir: filepath.Join(dir, "out"), marker: markerEnv + "=" + marker, stderr: &mcptest.SyncBuffer{}}
	if dump != "" {
		p.dump = filepath.Join(dump, strings.ReplaceAll(marker, "/", "-"))
		if err := os.MkdirAll(p.dump, 0o755); err != nil {
			return nil, err
		}
	}
	p.tmpDir = filepath.Join(dir, "tmp")
	for _, d := range []string{p.outDir, p.tmpDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	// Each server gets its own TMPDIR, so whatever it (or its browser)
	// leaves behind is seen, reported and removed.
	env := append(append([]string{}, spec.Env...), p.marker, "TMPDIR="+p.tmpDir)
	start := time.Now()
	e, err := embed.StartCommand(ctx, spec.Command, embed.Options{
		Args: spec.Args(p.outDir), Env: env, Dir: dir, Log: p.stderr, InitTimeout: timeout,
		ProtocolVersion: mcp.ProtocolVersion20251125, ClientName: "mcpbench",
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: %w\n%s", spec.Name, err, mcptest.Tail(p.stderr.String(), 2000))
	}
	p.client, p.pid = e.MCP(), e.Pid
	p.InitDur = time.Since(start)
	return p, nil
}

// listTools calls tools/list and remembers the tools for argument names
// and missing-tool checks.
func (p *proc) listTools(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err := p.client.ListTools(ctx, mcp.ListToolsRequest{})
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("tools/list: %w", err)
	}
	p.tools = map[string]mcp.Tool{}
	for _, t := range res.Tools {
		p.tools[t.Name] = t
	}
	return d, nil
}

// callResult is a tool call's answer as an agent sees it.
type callResult struct {
	Text    string        // the text parts of the response
	Linked  string        // contents of files the response links to (snapshots)
	Files   []string      // the linked files read
	Dur     time.Duration // request → response
	IsError bool
}

// Observed is everything an agent reads to see the result.
func (r callResult) Observed() string {
	if r.Linked == "" {
		return r.Text
	}
	return r.Text + "\n" + r.Linked
}

// call invokes a tool with a timeout. Element arguments are given as
// "target"; they are renamed to the server's own argument name ("ref" in
// older servers) and "element" is dropped when the schema has no such
// property.
func (p *proc) call(ctx context.Context, name string, args map[string]any, timeout time.Duration) (callResult, error) {
	t, ok := p.tools[name]
	if p.tools != nil && !ok {
		return callResult{}, fmt.Errorf("%s: %w", name, errMissingTool)
	}
	args = adaptArgs(t, args)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err := p.client.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	r := callResult{Dur: time.Since(start)}
	if err != nil {
		return r, fmt.Errorf("%s: %w", name, err)
	}
	r.Text = resultText(res)
	r.IsError = res.IsError
	r.Linked, r.Files = readLinked(r.Text, p.dir, p.outDir)
	p.save(name, args, r)
	if res.IsError {
		return r, fmt.Errorf("%s returned an error: %s", name, oneLine(r.Text, 300))
	}
	return r, nil
}

// adaptArgs maps the harness's argument names onto a tool's schema.
func adaptArgs(t mcp.Tool, args map[string]any) map[string]any {
	props := t.InputSchema.Properties
	if props == nil {
		return args
	}
	out := map[string]any{}
	for k, v := range args {
		switch {
		case k == "target" && props["target"] == nil && props["ref"] != nil:
			out["ref"] = v
		case k == "element" && props["element"] == nil:
		default:
			out[k] = v
		}
	}
	return out
}

// close stops the server: the client closes stdin and waits (mcp-go sends
// SIGTERM, then SIGKILL, if it lingers), then every process that carries
// this server's marker is killed, and its directory removed. It returns
// the processes that outlived the server and what it left in its TMPDIR.
func (p *proc) close() (left []proctree.Proc, tmpLeft []string) {
	before := proctree.Marked(p.marker)
	start := time.Now()
	done := make(chan struct{})
	go func() {
		if p.client != nil {
			_ = p.client.Close()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(8 * time.Second):
	}
	pgid := p.pid
	// Give the browser's helpers a moment to follow their parent out; what
	// is still there then outlived its server.
	for deadline := time.Now().Add(1500 * time.Millisecond); ; time.Sleep(50 * time.Millisecond) {
		if left = proctree.Remaining(p.marker, before); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) == 0 {
		p.ShutdownDur = time.Since(start)
	}
	proctree.Kill(p.marker, pgid, before, 5*time.Second)
	if ents, err := os.ReadDir(p.tmpDir); err == nil {
		for _, e := range ents {
			tmpLeft = append(tmpLeft, e.Name())
		}
	}
	if p.dump != "" {
		_ = os.WriteFile(filepath.Join(p.dump, "stderr.log"), []byte(p.stderr.String()), 0o644)
	}
	_ = os.RemoveAll(p.dir)
	return left, tmpLeft
}

// resultText joins the text parts of a tool result, as an agent reads them.
func resultText(res *mcp.CallToolResult) string { return embed.ResultOf(res).Text }

// save writes a call to the dump directory.
func (p *proc) save(name string, args map[string]any, r callResult) {
	if p.dump == "" {
		return
	}
	p.calls++
	a, _ := json.Marshal(args)
	body := fmt.Sprintf("%s %s\n%.1f ms, error=%v\n", name, a, float64(r.Dur.Microseconds())/1000, r.IsError)
	if p.dumpNote != nil {
		body += p.dumpNote() + "\n"
	}
	body += "\n" + r.Text + "\n"
	if r.Linked != "" {
		body += fmt.Sprintf("\n--- linked %v ---\n%s\n", r.Files, r.Linked)
	}
	_ = os.WriteFile(filepath.Join(p.dump, fmt.Sprintf("%03d-%s.txt", p.calls, name)), []byte(body), 0o644)
}
