package mcptest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
)

// Redis is a real redis-server (Debian's package) on a loopback port, with
// no persistence, for fleet tests. Stop and Start restart it on the same
// port (empty, as a crashed Redis without persistence comes back).
type Redis struct {
	t    testing.TB
	Port int
	dir  string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// StartRedis starts redis-server on a free loopback port; it is stopped
// when the test ends. The test fails when redis-server is not installed
// (.ci/deps installs it).
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	BrowserTier(t) // a service the unit tier does not start (.ci/deps may still be installing it)
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not installed: apt-get install -y redis-server (.ci/deps does)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r := &Redis{t: t, Port: port, dir: t.TempDir()}
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// URL is the redis:// URL of the server.
func (r *Redis) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.Port) }

// Addr is host:port.
func (r *Redis) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.Port) }

// Start (re)starts the server and waits until it accepts commands.
func (r *Redis) Start() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		return
	}
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(r.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir, "--protected-mode", "yes")
	cmd.Dir = r.dir
	out := &SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	proctree.Own(cmd)
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("start redis-server: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pingRedis(r.Addr()) {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			r.t.Fatalf("redis-server did not answer PING on %s:\n%s", r.Addr(), Tail(out.String(), 2000))
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.cmd = cmd
}

// Stop kills the server (as a crash would) and waits for it.
func (r *Redis) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}

// Restart kills the server and starts it again on the same port, empty (a
// crash and a restart without persistence), waiting until it answers.
func (r *Redis) Restart() {
	r.t.Helper()
	r.Stop()
	r.Start()
}

// Do sends one command (inline protocol) and returns the first reply line,
// for tests that look at the keys the fleet wrote.
func (r *Redis) Do(args ...string) string {
	r.t.Helper()
	return r.do(args, func(line string, _ *bufio.Reader) string { return line })
}

// Value sends one command whose reply is a bulk string (GET, HGET) and
// returns that string, "" for a nil reply.
func (r *Redis) Value(args ...string) string {
	r.t.Helper()
	return r.do(args, func(line string, rd *bufio.Reader) string {
		n, err := strconv.Atoi(strings.TrimPrefix(line, "$"))
		if !strings.HasPrefix(line, "$") || err != nil {
			r.t.Fatalf("redis %v: want a bulk string reply, got %q", args, line)
		}
		if n < 0 {
			return ""
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(rd, b); err != nil {
			r.t.Fatalf("redis %v: %v", args, err)
		}
		return string(b[:n])
	})
}

// do sends args as one command and hands the first reply line and the
// connection's reader to read.
func (r *Redis) do(args []string, read func(line string, rd *bufio.Reader) string) string {
	r.t.Helper()
	c, err := net.DialTimeout("tcp", r.Addr(), 2*time.Second)
	if err != nil {
		r.t.Fatalf("redis: %v", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		r.t.Fatalf("redis: %v", err)
	}
	rd := bufio.NewReader(c)
	line, err := rd.ReadString('\n')
	if err != nil {
		r.t.Fatalf("redis: %v", err)
	}
	return read(strings.TrimSpace(line), rd)
}

func pingRedis(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}
