//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
)

// fleetOptions are the flags of the fleet bench (--fleet).
type fleetOptions struct {
	on        bool
	instances int
	hopCalls  int
}

var flt fleetOptions

func fleetFlags() {
	flag.BoolVar(&flt.on, "fleet", false, "fleet mode: measure the forward hop (tools/list direct vs forwarded) and run the loop against --fleet-instances instances + Redis (requests spread at random) vs 1 instance")
	flag.IntVar(&flt.instances, "fleet-instances", 3, "fleet mode: instances sharing one redis-server")
	flag.IntVar(&flt.hopCalls, "hop-calls", 400, "fleet mode: tools/list calls timed per path (direct, forwarded)")
}

// fleetSecret authenticates the bench's instances to each other.
const fleetSecret = "mcpload-fleet-secret-0123456789"

// fleetMode reports whether a fleet run was asked for, and runs it.
func fleetMode(ctx context.Context, o options) (bool, error) {
	if !flt.on {
		return false, nil
	}
	if flt.instances < 2 {
		return true, fmt.Errorf("--fleet-instances %d: a fleet needs at least 2", flt.instances)
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		return true, errors.New("redis-server not found: apt-get install -y redis-server")
	}
	work, bin, err := prepare(ctx, o)
	if err != nil {
		return true, err
	}
	defer os.RemoveAll(work)
	fx := httptest.NewServer(http.FileServer(http.Dir(o.pages)))
	defer fx.Close()
	return true, runFleet(ctx, o, bin, work, fx.URL)
}

// startRedis starts redis-server on a free loopback port, without
// persistence.
func startRedis(ctx context.Context, work string) (*server, error) {
	dir, err := os.MkdirTemp(work, "redis-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir)
	cmd.Dir = dir
	return launch(ctx, dir, cmd, func(*server) string {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err != nil {
			return ""
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Second))
		b := make([]byte, 7)
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			return ""
		}
		if n, _ := io.ReadFull(c, b); n < 5 || string(b[:5]) != "+PONG" {
			return ""
		}
		return fmt.Sprintf("redis://127.0.0.1:%d/0", port)
	})
}

// startInstance starts one server in context isolation; with redisURL it
// joins the fleet.
func startInstance(ctx context.Context, o options, bin, work, name, redisURL string) (*server, error) {
	dir, err := os.MkdirTemp(work, name+"-")
	if err != nil {
		return nil, err
	}
	args := []string{"--transport", "streamable-http", "--port", "0", "--no-download",
		"--http-session-max", strconv.Itoa(o.sessionMax), "--http-isolation", "context",
		"--log-level", "info", "--output-dir", filepath.Join(dir, "out")}
	if redisURL != "" {
		args = append(args, "--http-session-backend", "redis", "--redis-url", redisURL, "--cluster-secret", fleetSecret)
	}
	return launch(ctx, dir, exec.Command(bin, args...), func(s *server) string { return mcptest.ListenURL(s.stderr.String()) })
}

// scatter sends every request to a random instance, as a load balancer
// without session affinity does.
type scatter struct {
	hosts []string
	base  http.RoundTripper
}

func (s *scatter) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	h := s.hosts[rand.IntN(len(s.hosts))]
	r.URL.Host, r.Host = h, h
	return s.base.RoundTrip(r)
}

// hopResult is the forward hop on tools/list.
type hopResult struct {
	Calls       int     `json:"calls"`
	DirectP50   float64 `json:"direct_p50_ms"`
	DirectP95   float64 `json:"direct_p95_ms"`
	ForwardP50  float64 `json:"forwarded_p50_ms"`
	ForwardP95  float64 `json:"forwarded_p95_ms"`
	AddedP50    float64 `json:"added_p50_ms"`
	DirectErrs  int     `json:"direct_errors"`
	ForwardErrs int     `json:"forwarded_errors"`
}

// rpc posts one JSON-RPC message to url for session sid and reads the whole
// answer.
func rpc(ctx context.Context, hc *http.Client, url, sid, body string) (string, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.Header.Get("Mcp-Session-Id"), resp.StatusCode, errors.Join(err, statusErr(resp.StatusCode, b))
}

func statusErr(code int, body []byte) error {
	if code/100 == 2 {
		return nil
	}
	return fmt.Errorf("HTTP %d: %s", code, mcptest.Tail(string(body), 200))
}

// measureHop opens a session on the owner, then times tools/list sent to
// the owner (direct) and to another instance (forwarded), interleaved so
// both see the same machine load.
func measureHop(ctx context.Context, owner, other string, calls int) (*hopResult, error) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer hc.CloseIdleConnections()
	sid, _, err := rpc(ctx, hc, owner, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpload-hop","version":"1"}}}`)
	if err != nil || sid == "" {
		return nil, fmt.Errorf("initialize on the owner: %v (session %q)", err, sid)
	}
	if _, _, err := rpc(ctx, hc, owner, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return nil, fmt.Errorf("initialized: %w", err)
	}
	r := &hopResult{Calls: calls}
	var direct, fwd []time.Duration
	list := func(url string, id int) (time.Duration, error) {
		start := time.Now()
		_, _, err := rpc(ctx, hc, url, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
		return time.Since(start), err
	}
	for i := 0; i < 20; i++ { // warm up both paths' connections
		_, _ = list(owner, 2)
		_, _ = list(other, 2)
	}
	for i := 0; i < calls && ctx.Err() == nil; i++ {
		first, second := owner, other
		if i%2 == 1 {
			first, second = other, owner
		}
		for _, u := range []string{first, second} {
			d, err := list(u, 10+i)
			switch {
			case err != nil && u == owner:
				r.DirectErrs++
			case err != nil:
				r.ForwardErrs++
			case u == owner:
				direct = append(direct, d)
			default:
				fwd = append(fwd, d)
			}
		}
	}
	_, _, _ = rpc(ctx, hc, owner, sid, `{"jsonrpc":"2.0","id":99,"method":"ping"}`)
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, owner, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	if resp, err := hc.Do(req); err == nil {
		resp.Body.Close()
	}
	r.DirectP50, r.DirectP95 = pct(direct, 50), pct(direct, 95)
	r.ForwardP50, r.ForwardP95 = pct(fwd, 50), pct(fwd, 95)
	r.AddedP50 = r.ForwardP50 - r.DirectP50
	return r, nil
}

// loadOn runs the navigate → snapshot → click loop with o.sessions sessions
// against urls (one: that instance; several: each request to a random one).
func loadOn(ctx context.Context, o options, name string, urls []string, pages string) *modeResult {
	r := &modeResult{Mode: name, Sessions: o.sessions, Tools: map[string]*toolStats{}}
	base := &http.Transport{MaxIdleConnsPerHost: 2 * o.sessions}
	defer base.CloseIdleConnections()
	hc := &http.Client{Transport: base}
	if len(urls) > 1 {
		var hosts []string
		for _, u := range urls {
			pu, err := url.Parse(u)
			if err != nil {
				r.add("initialize", 0, err)
				return r
			}
			hosts = append(hosts, pu.Host)
		}
		hc = &http.Client{Transport: &scatter{hosts: hosts, base: base}}
	}
	clients := connectAll(ctx, r, urls[0], hc, o.sessions)
	var wg sync.WaitGroup
	// Warm up untimed: every session's browser (context) exists before the
	// clock starts, so both setups are measured in their steady state.
	for _, c := range clients {
		if c != nil {
			wg.Go(func() {
				_, _, _ = call(ctx, c, o.callTO, "browser_navigate", map[string]any{"url": pages + "/lab.html"})
			})
		}
	}
	wg.Wait()
	lctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	for i, c := range clients {
		if c != nil {
			wg.Go(func() { sessionLoop(lctx, o, c, pages, i, r) })
		}
	}
	wg.Wait()
	for _, c := range clients {
		if c != nil {
			wg.Go(func() { _ = c.Close() })
		}
	}
	wg.Wait()
	for _, t := range r.Tools {
		t.P50ms, t.P95ms = pct(t.lat, 50), pct(t.lat, 95)
	}
	return r
}

func runFleet(ctx context.Context, o options, bin, work, pages string) (err error) {
	var started []*server
	defer func() {
		for i := len(started) - 1; i >= 0; i-- {
			if left, serr := started[i].stop(); serr != nil || len(left) != 0 {
				err = errors.Join(err, fmt.Errorf("stop %s: %v (left %v)", started[i].url, serr, left))
			}
		}
	}()
	rd, err := startRedis(ctx, work)
	if err != nil {
		return fmt.Errorf("redis-server: %w", err)
	}
	started = append(started, rd)
	var urls []string
	for i := 0; i < flt.instances; i++ {
		s, err := startInstance(ctx, o, bin, work, fmt.Sprintf("fleet%d", i), rd.url)
		if err != nil {
			return fmt.Errorf("fleet instance %d: %w", i, err)
		}
		started = append(started, s)
		urls = append(urls, s.url)
	}
	logf("forward hop: %d tools/list calls direct and forwarded", flt.hopCalls)
	hop, err := measureHop(ctx, urls[0], urls[1], flt.hopCalls)
	if err != nil {
		return fmt.Errorf("forward hop: %w", err)
	}
	logf("%d instances + Redis: %d sessions for %v, each request to a random instance", flt.instances, o.sessions, o.duration)
	fleetRes := loadOn(ctx, o, fmt.Sprintf("%d instances + Redis", flt.instances), urls, pages)
	for _, s := range started[1:] {
		if left, serr := s.stop(); serr != nil || len(left) != 0 {
			err = errors.Join(err, fmt.Errorf("stop %s: %v (left %v)", s.url, serr, left))
		}
	}
	started = started[:1]

	one, serr := startInstance(ctx, o, bin, work, "single", "")
	if serr != nil {
		return errors.Join(err, fmt.Errorf("single instance: %w", serr))
	}
	started = append(started, one)
	logf("1 instance: %d sessions for %v", o.sessions, o.duration)
	singleRes := loadOn(ctx, o, "1 instance", []string{one.url}, pages)

	printFleet(os.Stdout, o, hop, []*modeResult{singleRes, fleetRes})
	if o.jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{"duration_s": o.duration.Seconds(), "sessions": o.sessions, "hop": hop, "load": []*modeResult{singleRes, fleetRes}}, "", "  ")
		if o.jsonOut == "-" {
			fmt.Println(string(b))
		} else if werr := os.WriteFile(o.jsonOut, append(b, '\n'), 0o644); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	return err
}

func printFleet(w io.Writer, o options, hop *hopResult, rs []*modeResult) {
	fmt.Fprintf(w, "\nForward hop: tools/list on one session, %d calls per path, interleaved\n\n", hop.Calls)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "path\tp50 ms\tp95 ms\terrors\t")
	fmt.Fprintf(tw, "direct (owner)\t%.2f\t%.2f\t%d\t\n", hop.DirectP50, hop.DirectP95, hop.DirectErrs)
	fmt.Fprintf(tw, "forwarded (other → owner)\t%.2f\t%.2f\t%d\t\n", hop.ForwardP50, hop.ForwardP95, hop.ForwardErrs)
	fmt.Fprintf(tw, "added by the hop\t%.2f\t\t\t\n", hop.AddedP50)
	_ = tw.Flush()
	fmt.Fprintf(w, "\n%d sessions, %v each (navigate → snapshot → click, context isolation)\n\n", o.sessions, o.duration)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "setup\tsessions\trounds\trounds/s\tcalls\terrors\tnavigate p50/p95 ms\tsnapshot p50/p95 ms\tclick p50/p95 ms\t")
	for _, r := range rs {
		cell := func(name string) string {
			t := r.Tools[name]
			if t == nil {
				return "-"
			}
			return fmt.Sprintf("%.0f / %.0f", t.P50ms, t.P95ms)
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%d\t%.1f\t%d\t%d\t%s\t%s\t%s\t\n", r.Mode, r.Connected, r.Sessions, r.Loops,
			float64(r.Loops)/o.duration.Seconds(), r.Calls, r.Errors, cell("browser_navigate"), cell("browser_snapshot"), cell("browser_click"))
	}
	_ = tw.Flush()
	for _, r := range rs {
		for _, e := range r.FirstErrors {
			fmt.Fprintf(w, "%s: error: %s\n", r.Mode, mcptest.Tail(e, 300))
		}
	}
}
