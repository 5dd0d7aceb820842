package tools

import (
	"fmt"
	"time"

	"github.com/mxschmitt/playwright-go"
)

func interactTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_click"), Cap: "core", Aliases: refAlias, Handle: tabTool("browser_click", tabOpts{snapshot: snapDiff}, click)},
		{Def: upstreamDef("browser_type"), Cap: "core", Aliases: refAlias, Handle: tabTool("browser_type", tabOpts{snapshot: snapDiff}, typeText)},
	}
}

// act runs an action on the page and settles: it returns early when the
// action opens a dialog or file chooser (the page is then blocked), and
// otherwise waits, bounded, for what the action set off.
func (c *tabCall) act(action func() error) error {
	navBefore := c.tab.LastNavSeq()
	modal := c.tab.ModalOpened()
	done := make(chan error, 1)
	go func() { done <- action() }()
	select {
	case err := <-done:
		if err != nil {
			return err
		}
	case <-modal:
		return nil
	case <-c.gen.LostCh():
		return fmt.Errorf("browser lost during the action")
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
	c.settle(navBefore)
	return nil
}

// settle waits for a navigation the action started and for the requests in
// flight to finish, each bounded; never a fixed sleep.
func (c *tabCall) settle(navBefore int) {
	page := c.tab.Page
	deadline := time.Now().Add(3 * time.Second)
	if c.tab.LastNavSeq() != navBefore {
		_ = page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateDomcontentloaded, Timeout: playwright.Float(5000)})
		deadline = time.Now().Add(2 * time.Second)
		_ = page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateLoad, Timeout: playwright.Float(2000)})
	}
	for c.tab.PendingRequests() > 0 && time.Now().Before(deadline) && len(c.tab.Modals()) == 0 {
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func click(c *tabCall) error {
	target := c.args.String("target", "")
	loc, err := c.locate(target)
	if err != nil {
		return err
	}
	var mods []playwright.KeyboardModifier
	for _, m := range c.args.Strings("modifiers") {
		mods = append(mods, playwright.KeyboardModifier(m))
	}
	button := playwright.MouseButton(c.args.String("button", "left"))
	return c.act(func() error {
		if c.args.Bool("doubleClick", false) {
			return loc.Dblclick(playwright.LocatorDblclickOptions{Button: &button, Modifiers: mods})
		}
		return loc.Click(playwright.LocatorClickOptions{Button: &button, Modifiers: mods})
	})
}

func typeText(c *tabCall) error {
	target := c.args.String("target", "")
	text := c.args.String("text", "")
	loc, err := c.locate(target)
	if err != nil {
		return err
	}
	return c.act(func() error {
		if c.args.Bool("slowly", false) {
			if err := loc.PressSequentially(text); err != nil {
				return err
			}
		} else if err := loc.Fill(text); err != nil {
			return err
		}
		if c.args.Bool("submit", false) {
			return loc.Press("Enter")
		}
		return nil
	})
}
