package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// evaluateTimeout bounds a browser_evaluate call; the script may keep running
// in the page after that, but the agent gets its answer.
const evaluateTimeout = 30 * time.Second

func evaluateTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_evaluate"), Cap: "core", Aliases: refAlias, Handle: tabTool("browser_evaluate", tabOpts{snapshot: snapDiff}, evaluate)},
		{Def: upstreamDef("browser_run_code_unsafe"), Cap: "core", Handle: runCodeUnsafe},
	}
}

func evaluate(c *tabCall) error {
	fn, loc, err := c.evalArgs()
	if err != nil {
		return err
	}
	nav, seq := c.tab.LastNavSeq(), c.tab.Seq()
	ch := c.evaluateAsync(loc, fn)
	ctx, cancel := context.WithTimeout(c.ctx, evaluateTimeout)
	defer cancel()
	var r evalResult
	select {
	case r = <-ch:
	case <-c.tab.ModalOpened():
		c.resp.Result("The script opened a dialog; handle it with browser_handle_dialog")
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the function did not finish within %v; it may still be running in the page", evaluateTimeout)
	}
	if r.err != nil {
		return fmt.Errorf("evaluate: %s", friendlyError(r.err))
	}
	b, err := json.MarshalIndent(r.v, "", "  ")
	if err != nil {
		b = []byte(fmt.Sprint(r.v))
	}
	if name := c.args.String("filename", ""); name != "" {
		p, err := c.env.writeOutput(name, "evaluate", ".json", b)
		if err != nil {
			return err
		}
		c.resp.Result("- [Evaluation result](%s)", relLink(p))
		return nil
	}
	c.resp.ResultText(string(b))
	c.settle(nav, seq)
	return nil
}

// runCodeUnsafe refuses: upstream runs the snippet with a Node Playwright
// `page` object in its own process (RCE-equivalent). This server has no Node
// runtime for tools and will not pretend; browser_evaluate runs JavaScript in
// the page instead.
func runCodeUnsafe(_ context.Context, _ *Env, _ Args) *Response {
	return (&Response{}).Error("browser_run_code_unsafe is not supported by cloakbrowser-mcp: it would run arbitrary code in the server process. " +
		"Use browser_evaluate to run JavaScript in the page, and the browser_* tools for Playwright actions.")
}

// evalArgs reads the function and optional target of the evaluate tools.
func (c *tabCall) evalArgs() (string, playwright.Locator, error) {
	fn := strings.TrimSpace(c.args.String("function", ""))
	if fn == "" {
		return "", nil, fmt.Errorf("function is empty: pass e.g. () => document.title")
	}
	if t := c.args.String("target", ""); t != "" {
		loc, err := c.locate(t)
		return fn, loc, err
	}
	return fn, nil, nil
}

// evalResult is what an evaluation in the page returned.
type evalResult struct {
	v   any
	err error
}

// evaluateAsync runs fn on the element (or the page when loc is nil) and
// delivers the result on the channel, so callers can race it against a
// timeout or a dialog.
func (c *tabCall) evaluateAsync(loc playwright.Locator, fn string) <-chan evalResult {
	ch := make(chan evalResult, 1)
	go func() {
		var r evalResult
		r.err = safely(func() (err error) {
			if loc != nil {
				r.v, err = loc.Evaluate(fn, nil)
			} else {
				r.v, err = c.tab.Page.Evaluate(fn)
			}
			return err
		})
		ch <- r
	}()
	return ch
}
