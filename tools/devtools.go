package tools

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// devtoolsTools are upstream's --caps=devtools tools this server has: a
// Playwright trace (one at a time per browser, saved on close) and element
// highlights.
func devtoolsTools() []*Tool {
	quiet := tabOpts{noPage: true}
	return []*Tool{
		{Def: upstreamDef("browser_start_tracing"),
			Cap: "devtools", Handle: tabTool("browser_start_tracing", quiet, startTracing)},
		{Def: extendedDef("browser_stop_tracing", props{"filename": pStr("File name for the trace, relative to the output directory. Defaults to `trace-{timestamp}.zip`.")}),
			Cap: "devtools", Handle: tabTool("browser_stop_tracing", quiet, stopTracing)},
		{Def: upstreamDef("browser_highlight"),
			Cap: "devtools", Aliases: refAlias, Handle: tabTool("browser_highlight", quiet, highlight)},
		{Def: upstreamDef("browser_hide_highlight"),
			Cap: "devtools", Aliases: refAlias, Handle: tabTool("browser_hide_highlight", quiet, hideHighlight)},
	}
}

func startTracing(c *tabCall) error {
	env, sess := c.env, c.sess
	err := c.gen.StartTrace(c.ctx, session.TraceOptions{
		Title: "cloakbrowser-mcp session " + c.sess.ID(),
		// Closing the session or the browser saves the trace instead of
		// losing it, in the caller's directory.
		Save: func(r io.Reader) (string, error) {
			a, err := env.filesOf(sess)
			if err != nil {
				return "", err
			}
			defer a.Close()
			return a.WriteFrom("", "trace", ".zip", func(w io.Writer) error {
				_, err := io.Copy(w, r)
				return err
			})
		},
	})
	var running *session.TraceRunningError
	switch {
	case errors.As(err, &running):
		return fmt.Errorf("%w: stop it with browser_stop_tracing first", err)
	case errors.Is(err, session.ErrTraceBusy):
		return fmt.Errorf("%w: try again in a moment", err)
	case err != nil:
		return fmt.Errorf("start tracing: %w", err)
	}
	c.resp.Result("Tracing started: screenshots and DOM snapshots of every action. Stop it with browser_stop_tracing; closing the browser saves it too.")
	return nil
}

var errNoTrace = fmt.Errorf("%w: start one with browser_start_tracing", session.ErrNoTrace)

func stopTracing(c *tabCall) error {
	if _, ok := c.gen.TraceRunning(); !ok {
		return errNoTrace
	}
	name := c.args.String("filename", "")
	if name != "" && !strings.EqualFold(filepath.Ext(name), ".zip") {
		name += ".zip"
	}
	a, err := c.env.filesOf(c.sess)
	if err != nil {
		return err
	}
	defer a.Close()
	if _, _, err := a.Resolve(name, "trace", ".zip"); err != nil {
		// Keep tracing: the agent can retry with another name.
		return err
	}
	// The driver writes the trace into a private directory; it is copied
	// here through the root, so a symlink planted since is not followed.
	var p string
	started, err := c.gen.StopTrace(c.ctx, func(r io.Reader) (err error) {
		p, err = a.WriteFrom(name, "trace", ".zip", func(w io.Writer) error {
			_, err := io.Copy(w, r)
			return err
		})
		return err
	})
	switch {
	case errors.Is(err, session.ErrNoTrace):
		return errNoTrace
	case errors.Is(err, session.ErrTraceBusy):
		return fmt.Errorf("%w: try again in a moment", err)
	case err != nil:
		return fmt.Errorf("stop tracing: %w", err)
	}
	c.resp.Result("- [Trace](%s) (%s of recording)", c.env.link(p), time.Since(started).Round(time.Second))
	c.resp.Result("Open it with `npx playwright show-trace %s` or at https://trace.playwright.dev", c.env.link(p))
	c.publish(p, "Playwright trace")
	return nil
}

func highlight(c *tabCall) error {
	target := c.args.String("target", "")
	el, err := c.locate(target)
	if err != nil {
		return err
	}
	style := c.args.String("style", "")
	if strings.ContainsAny(style, "<>") {
		return fmt.Errorf("style must be inline CSS declarations, e.g. \"outline: 2px dashed red\"")
	}
	box, err := el.Highlight(c.ctx, target, c.args.String("element", ""), style)
	if err != nil {
		return fmt.Errorf("highlight %s: %w", c.describe(target), err)
	}
	c.resp.Result("Highlighted %s at %v", c.describe(target), box)
	return nil
}

func hideHighlight(c *tabCall) error {
	n, err := c.tab.HideHighlights(c.ctx, c.args.String("target", ""), c.args.String("element", ""))
	if err != nil {
		return fmt.Errorf("hide highlight: %w", err)
	}
	if n == 0 {
		c.resp.Result("No highlight to remove")
		return nil
	}
	c.resp.Result("Removed %d highlight(s)", n)
	return nil
}
