package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// rawServer runs the binary with raw pipes, to see every byte on stdout.
type rawServer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *mcptest.SyncBuffer
}

func startRaw(t *testing.T, env []string, args ...string) *rawServer {
	t.Helper()
	cmd := exec.Command(mcptest.Binary(t), args...)
	cmd.Env = append(cmd.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	r := &rawServer{cmd: cmd, stdin: stdin, lines: make(chan string, 100), stderr: &mcptest.SyncBuffer{}}
	cmd.Stderr = r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return r
}

func (r *rawServer) send(t *testing.T, id int, method string, params any) {
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id > 0 {
		msg["id"] = id
	}
	b, _ := json.Marshal(msg)
	if _, err := r.stdin.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

// recv reads the response to id; every line on stdout must be JSON-RPC.
func (r *rawServer) recv(t *testing.T, id int) map[string]any {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-r.lines:
			if !ok {
				t.Fatalf("stdout closed; stderr:\n%s", r.stderr.String())
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil || m["jsonrpc"] != "2.0" {
				t.Fatalf("stdout carried a non-JSON-RPC line: %q", line)
			}
			if fmt.Sprint(m["id"]) == fmt.Sprint(id) {
				return m
			}
		case <-timeout:
			t.Fatalf("no response to %d; stderr:\n%s", id, r.stderr.String())
		}
	}
}

func (r *rawServer) initialize(t *testing.T) {
	r.send(t, 1, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}})
	r.recv(t, 1)
	r.send(t, 0, "notifications/initialized", map[string]any{})
}

func TestStdoutCarriesOnlyJSONRPCAndSignalsCleanUp(t *testing.T) {
	t.Parallel() // its own server process, no process-wide state
	mcptest.Chromium(t)
	srv := pages(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, 0} {
		name := "stdin EOF"
		if sig != 0 {
			name = sig.String()
		}
		t.Run(name, func(t *testing.T) {
			env, tmp := serverEnv(t)
			r := startRaw(t, env, "--no-download", "--log-level", "debug", "--output-dir", filepath.Join(tmp, "out"))
			r.initialize(t)
			r.send(t, 2, "tools/call", map[string]any{"name": "browser_navigate", "arguments": map[string]any{"url": srv.URL + "/lab.html"}})
			resp := r.recv(t, 2)
			if !strings.Contains(fmt.Sprint(resp["result"]), "Lab page") {
				t.Fatalf("navigate: %v", resp)
			}
			profiles, _ := filepath.Glob(filepath.Join(tmp, "cloakbrowser-mcp-profile-*"))
			if len(profiles) != 1 {
				t.Fatalf("profiles: %v", profiles)
			}
			if sig != 0 {
				_ = r.cmd.Process.Signal(sig)
			} else {
				_ = r.stdin.Close()
			}
			done := make(chan error, 1)
			go func() { done <- r.cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("server did not exit after %s; stderr:\n%s", name, r.stderr.String())
			}
			// A notification the page caused after the last answer (a
			// console error of a late 404) is still JSON-RPC; anything else
			// is not allowed on stdout.
			for line := range r.lines {
				var msg struct {
					JSONRPC string `json:"jsonrpc"`
					ID      any    `json:"id"`
					Method  string `json:"method"`
				}
				if json.Unmarshal([]byte(line), &msg) != nil || msg.JSONRPC != "2.0" || msg.ID != nil || !strings.HasPrefix(msg.Method, "notifications/") {
					t.Fatalf("stdout carried more after shutdown: %q", line)
				}
			}
			if pids := session.ProfilePIDs(profiles[0]); len(pids) != 0 {
				t.Fatalf("browser processes left: %v", pids)
			}
			if m, _ := filepath.Glob(filepath.Join(tmp, "cloakbrowser-mcp-profile-*")); len(m) != 0 {
				t.Fatalf("temp profile left: %v", m)
			}
		})
	}
}
