package tools

import (
	"errors"
	"fmt"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

func waitTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_wait_for"), Cap: "core", Handle: tabTool("browser_wait_for", tabOpts{snapshot: snapDiff}, waitFor)},
	}
}

const maxWait = 30 * time.Second

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
		select {
		case <-time.After(time.Duration(secs * float64(time.Second))):
		case <-c.tab.ModalOpened():
		case <-c.ctx.Done():
			return c.ctx.Err()
		}
	}
	if gone != "" {
		if err := c.tab.WaitForText(c.ctx, gone, true, maxWait); err != nil {
			if errors.Is(err, page.ErrModal) || errors.Is(err, session.ErrBrowserGone) {
				return err
			}
			return fmt.Errorf("text %s did not disappear within %v", clip.Quote(gone), maxWait)
		}
	}
	if text != "" {
		if err := c.tab.WaitForText(c.ctx, text, false, maxWait); err != nil {
			if errors.Is(err, page.ErrModal) || errors.Is(err, session.ErrBrowserGone) {
				return err
			}
			return fmt.Errorf("text %s did not appear within %v", clip.Quote(text), maxWait)
		}
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
