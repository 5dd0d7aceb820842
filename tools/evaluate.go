package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
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
	fn, el, err := c.evalArgs()
	if err != nil {
		return err
	}
	nav, seq := c.tab.LastNavSeq(), c.tab.Seq()
	ctx, cancel := context.WithTimeout(c.ctx, evaluateTimeout)
	defer cancel()
	v, err := c.evaluateOn(ctx, el, fn)
	var te *page.TimeoutError
	switch {
	case errors.Is(err, page.ErrModal):
		c.resp.Result("The script opened a dialog; handle it with browser_handle_dialog")
		return nil
	case errors.As(err, &te) && c.ctx.Err() == nil:
		return fmt.Errorf("the function did not finish within %v; it may still be running in the page", evaluateTimeout)
	case err != nil:
		return fmt.Errorf("evaluate: %s", friendlyError(err))
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		b = []byte(fmt.Sprint(v))
	}
	if name := c.args.String("filename", ""); name != "" {
		p, err := c.writeOutput(name, "evaluate", ".json", b)
		if err != nil {
			return err
		}
		c.resp.Result("- [Evaluation result](%s)", c.env.link(p))
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
func (c *tabCall) evalArgs() (string, *page.Element, error) {
	fn := strings.TrimSpace(c.args.String("function", ""))
	if fn == "" {
		return "", nil, fmt.Errorf("function is empty: pass e.g. () => document.title")
	}
	if t := c.args.String("target", ""); t != "" {
		el, err := c.locate(t)
		return fn, el, err
	}
	return fn, nil, nil
}

// evaluateOn runs fn on the element, or on the page when el is nil.
func (c *tabCall) evaluateOn(ctx context.Context, el *page.Element, fn string) (any, error) {
	if el != nil {
		return el.Evaluate(ctx, fn, nil)
	}
	return c.tab.Evaluate(ctx, fn)
}
