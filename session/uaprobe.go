package session

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
)

// A persistent launch fixes its context's user agent when it starts, so
// the headed user agent of its binary must be known before: read from a
// short headless start of the binary, once per binary (then kept on disk,
// uaCacheFile). That read used to wait for the driver and then cost a
// Playwright launch of its own, one after the other: about 350 ms more for
// the first page of every process that found no cache (a new container, a
// CI machine, a binary just updated). It now starts with the launch and
// runs while the driver starts: the binary is started by us, with a
// DevTools pipe of our own (its fds 3 and 4, as Playwright starts it: no
// port), asked Browser.getVersion, and closed.

// uaProbe is a read of the headed user agent under way; done is closed
// when it ended. ok is false when it found nothing (no cache, and the
// pipe read failed or does not apply): the launch then reads it the older
// way, through the driver.
type uaProbe struct {
	done chan struct{}
	ua   string
	ok   bool
}

// startUAProbe begins the read of bin's headed user agent for a persistent
// launch with args: at once from the cache when it has it, else in the
// background. The caller waits on done before it returns (ctx ends the
// read).
func (c Config) startUAProbe(ctx context.Context, bin cloakbrowser.BinaryInfo, args []string) *uaProbe {
	p := &uaProbe{done: make(chan struct{})}
	key := uaKey(bin, c.Launch.Channel, args)
	if ua, ok := cachedUserAgent(bin, key); ok {
		p.ua, p.ok = ua, true
		close(p.done)
		return p
	}
	if c.Launch.Channel != "" || bin.BinaryPath == "" {
		// A channel's binary is for Playwright to find.
		close(p.done)
		return p
	}
	go func() {
		defer close(p.done)
		start := time.Now()
		raw, err := pipeUserAgent(ctx, bin.BinaryPath, args, min(c.launchTimeout(), 30*time.Second))
		if err != nil {
			c.Log.Debug().Err(err).Msg("read the browser's user agent over a pipe; reading it through the driver")
			return
		}
		p.ua, p.ok = c.keepUserAgent(bin, key, headfulOf(raw)), true
		c.Log.Debug().Int64("ms", time.Since(start).Milliseconds()).Msg("browser's user agent read over a pipe")
	}()
	return p
}

// cachedUserAgent is the headed user agent kept for key, in this process
// or on disk.
func cachedUserAgent(bin cloakbrowser.BinaryInfo, key string) (string, bool) {
	if v, ok := userAgents.Load(key); ok {
		return v.(string), true
	}
	if ua, ok := loadCachedUA(uaCacheFile(bin, key)); ok {
		userAgents.Store(key, ua)
		return ua, true
	}
	return "", false
}

// keepUserAgent keeps ua, a headed user agent (or "": the browser's own),
// for key in this process and on disk, and returns it.
func (c Config) keepUserAgent(bin cloakbrowser.BinaryInfo, key, ua string) string {
	userAgents.Store(key, ua)
	if err := storeCachedUA(uaCacheFile(bin, key), ua); err != nil {
		c.Log.Debug().Err(err).Msg("keep the browser's user agent for the next start")
	}
	return ua
}

// pipeUserAgent starts binary headless with args and no window, in a
// temporary profile, asks it Browser.getVersion over its DevTools pipe and
// returns the user agent it names; the browser and its profile are gone
// when it returns. It ends within timeout and with ctx.
func pipeUserAgent(ctx context.Context, binary string, args []string, timeout time.Duration) (string, error) {
	if runtime.GOOS == "windows" {
		return "", errors.New("no DevTools pipe on Windows")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	profile, err := ownedTempDir("uaprobe-")
	if err != nil {
		return "", err
	}
	defer func() {
		killAndWait(profile, 5*time.Second)
		_ = removeAllRetry(profile)
	}()
	// The browser reads commands from its fd 3 and writes answers to its
	// fd 4, each message ending with a NUL byte.
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return "", err
	}
	defer cmdW.Close()
	resR, resW, err := os.Pipe()
	if err != nil {
		_ = cmdR.Close()
		return "", err
	}
	all := cloakbrowser.DedupeArgs(append(slices.Clone(args),
		"--headless", "--no-startup-window", "--remote-debugging-pipe", "--user-data-dir="+profile))
	cmd := exec.Command(binary, all...)
	for k, v := range browserEnv() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.ExtraFiles = []*os.File{cmdR, resW}
	proctree.Own(cmd)
	err = cmd.Start()
	_ = cmdR.Close()
	_ = resW.Close()
	if err != nil {
		_ = resR.Close()
		return "", fmt.Errorf("start %s: %w", binary, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	type answer struct {
		ua  string
		err error
	}
	got := make(chan answer, 1)
	go func() {
		ua, err := readUserAgent(resR)
		got <- answer{ua, err}
	}()
	var a answer
	// A write that fails means the browser is gone or closed its end:
	// what it wrote before may still be in the pipe, so it is read all
	// the same.
	_, _ = cmdW.Write([]byte(`{"id":1,"method":"Browser.getVersion"}` + "\x00"))
	select {
	case a = <-got:
		got = nil
	case <-exited:
		// What it wrote before it exited may still be in the pipe; a
		// child of the browser may hold the pipe open.
		select {
		case a = <-got:
			got = nil
		case <-time.After(time.Second):
			a.err = io.EOF
		}
	case <-ctx.Done():
		a.err = fmt.Errorf("%s did not answer: %w", binary, ctx.Err())
	}
	if errors.Is(a.err, io.EOF) {
		// The pipe closed: say so if the browser exited.
		select {
		case <-exited:
			a.err = fmt.Errorf("%s exited before it answered (%v)", binary, waitErr)
		case <-time.After(time.Second):
		}
	}
	// A browser that answered is asked to close (its children go with
	// it); one that did not is killed, and killAndWait ends its children.
	grace := 3 * time.Second
	if a.err != nil {
		grace = 0
	}
	_, _ = cmdW.Write([]byte(`{"id":2,"method":"Browser.close"}` + "\x00"))
	select {
	case <-exited:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-exited
	}
	// Children it started as it closed (its GPU and network processes)
	// outlive it for a moment: they are in its group.
	proctree.KillGroup(cmd.Process.Pid)
	// The browser's end of the pipe is closed now; closing ours as well
	// ends the read whatever the browser left in it.
	_ = resR.Close()
	if got != nil {
		<-got
	}
	return a.ua, a.err
}

// readUserAgent reads DevTools messages from r until the answer to
// message 1 (Browser.getVersion), and returns its user agent.
func readUserAgent(r io.Reader) (string, error) {
	br := bufio.NewReader(io.LimitReader(r, 1<<20))
	for {
		msg, err := br.ReadBytes(0)
		if err != nil {
			return "", fmt.Errorf("read the DevTools pipe: %w", err)
		}
		var m struct {
			ID     int `json:"id"`
			Result struct {
				UserAgent string `json:"userAgent"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil || m.ID != 1 {
			continue
		}
		if m.Error != nil {
			return "", fmt.Errorf("Browser.getVersion: %s", m.Error.Message)
		}
		if m.Result.UserAgent == "" {
			return "", errors.New("Browser.getVersion gave no user agent")
		}
		return m.Result.UserAgent, nil
	}
}
