package tools

import (
	"context"
	"errors"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

func tabsTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_tabs"), Cap: "core", Handle: tabsTool},
		{Def: upstreamDef("browser_close"), Cap: "core", Handle: closeBrowser},
	}
}

func tabsTool(ctx context.Context, env *Env, args Args) *Response {
	resp := &Response{}
	sess, err := env.Session(ctx)
	if err != nil {
		return resp.Error("%v", err)
	}
	action := args.String("action", "")
	hasIndex := args.Has("index")
	index := int(args.Number("index", -1))
	if hasIndex && float64(index) != args.Number("index", -1) {
		return resp.Error("index must be a whole number, got %v", args.Number("index", -1))
	}
	err = sess.Do(ctx, func(ctx context.Context, g *session.Generation) error {
		var current *page.Tab
		switch action {
		case "list":
		case "new":
			t, err := g.NewTab(ctx)
			if err != nil {
				return err
			}
			current = t
			if u := args.String("url", ""); u != "" {
				target, err := checkURL(u, env.AllowUnrestrictedFileAccess)
				if err != nil {
					resp.Error("%v", err)
					break
				}
				if _, err := t.Navigate(ctx, target); err != nil {
					resp.Error("Navigation to %s failed: %s", clip.Short(target), friendlyError(err))
					break
				}
				resp.Code().Action(codegen.Action{Name: "navigate", URL: target})
			}
		case "select":
			if !hasIndex {
				resp.Error("select needs index: list the tabs with browser_tabs action=list")
				return nil
			}
			t, err := g.Select(ctx, index)
			if err != nil && t == nil {
				resp.Error("%v", err)
				return nil
			}
			current = t
		case "close":
			tabs := g.Tabs()
			var t *page.Tab
			if hasIndex {
				if index < 0 || index >= len(tabs) {
					resp.Error("tab %d not found: there are %d tabs; list them with browser_tabs", index, len(tabs))
					return nil
				}
				t = tabs[index]
			} else {
				var err error
				if t, err = g.CurrentTab(ctx); err != nil {
					return err
				}
			}
			if err := g.CloseTab(ctx, t); err != nil {
				return err
			}
		}
		resp.SetTabs(tabLines(ctx, g))
		if current == nil {
			current, _ = g.CurrentTab(ctx)
		}
		if current != nil && action != "list" {
			resp.SetPage(pageLines(ctx, current))
		}
		return nil
	})
	if err != nil {
		return sessionError(resp, err)
	}
	return resp
}

// sessionError reports a failure to get or use the browser.
func sessionError(resp *Response, err error) *Response {
	switch {
	case errors.Is(err, session.ErrBrowserGone):
		return resp.Error("The browser was closed or crashed during the call; the next browser call starts a new one. Tabs and page state were lost.")
	case errors.Is(err, session.ErrClosed):
		return resp.Error("The session is closed.")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return resp.Error("The call was cancelled: %v", err)
	}
	return resp.Error("%v", err)
}

func closeBrowser(ctx context.Context, env *Env, _ Args) *Response {
	resp := &Response{}
	sess, err := env.Session(ctx)
	if err != nil {
		return resp.Error("%v", err)
	}
	resp.Code().Add("await page.close()") // upstream's line, without a semicolon
	if sess.Current() == nil {
		resp.Result("No open browser")
		return resp
	}
	if err := sess.CloseBrowser(ctx); err != nil {
		return resp.Error("Closing the browser did not finish: %v", err)
	}
	resp.Result("Closed the browser; the next browser call opens a new one")
	return resp
}
