package tools

import (
	"errors"
	"fmt"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

func waitTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_wait_for"), Cap: "core", Handle: tabTool("browser_wait_for", tabOpts{snapshot: snapDiff}, waitFor)},
	}
}

// maxWait bounds the time a browser_wait_for call sleeps ("time").
const maxWait = 30 * time.Second

// waitFor sleeps "time" seconds, then waits for textGone to disappear and
// text to appear, each at most the action timeout (--timeout-action, 5 s
// by default), as upstream does.
func waitFor(c *tabCall) error {
	secs := c.args.Number("time", 0)
	text, gone := c.args.String("text", ""), c.args.String("textGone", "")
	if !c.args.Has("time") && text == "" && gone == "" {
		return fmt.Errorf("pass time, text or textGone")
	}
	if secs < 0 || secs > maxWait.Seconds() {
		return fmt.Errorf("time must be between 0 and %v seconds, got %v", maxWait.Seconds(), secs)
	}
	if secs > 0 {
		// Upstream takes time as the texts' timeout; this server sleeps
		// first (see waitFor), and the code says so.
		c.code("await new Promise(f => setTimeout(f, " + codegen.Number(secs) + " * 1000));")
		select {
		case <-time.After(time.Duration(secs * float64(time.Second))):
		case <-c.tab.ModalOpened():
		case <-c.ctx.Done():
			return c.ctx.Err()
		}
	}
	limit := c.sess.Config().EffectiveActionTimeout()
	waitText := func(s string, disappear bool, failed string) error {
		err := c.tab.WaitForText(c.ctx, s, disappear, limit)
		if err == nil || errors.Is(err, page.ErrModal) || errors.Is(err, session.ErrBrowserGone) {
			return err
		}
		return fmt.Errorf("text %s did not %s within %v (the action timeout, --timeout-action); to wait longer, pass \"time\" (seconds to wait first, up to %v)",
			clip.Quote(s), failed, limit, maxWait.Seconds())
	}
	// The code of a text wait, as upstream prints it; with text and
	// textGone both (upstream prints the first to happen) both ran here.
	waitCode := func(s, state string) {
		c.code("await page.getByText(" + codegen.JSON(s) + ").first().waitFor({ state: '" + state + "' });")
	}
	if gone != "" {
		if err := waitText(gone, true, "disappear"); err != nil {
			return err
		}
		waitCode(gone, "hidden")
	}
	if text != "" {
		if err := waitText(text, false, "appear"); err != nil {
			return err
		}
		waitCode(text, "visible")
	}
	switch {
	case text != "":
		c.resp.Result("Text %s appeared", clip.Quote(text))
	case gone != "":
		c.resp.Result("Text %s is gone", clip.Quote(gone))
	default:
		c.resp.Result("Waited %v seconds", secs)
	}
	return nil
}
