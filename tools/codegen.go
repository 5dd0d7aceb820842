package tools

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// Output shapes every tool answer as upstream's --codegen, --secrets and
// --image-responses do.
type Output struct {
	// Codegen is the language of "### Ran Playwright code"; if empty,
	// TypeScript. codegen.None leaves the section out.
	Codegen codegen.Language
	// Secrets, if set, are typed for their names and redacted from every
	// response.
	Secrets *Secrets
	// ImageResponses is "allow" (or empty), "omit" (no image parts) or
	// "only" (a successful answer that has images carries them alone).
	ImageResponses string
	// ImageMaxSide and ImageMaxBytes bound the images answers carry
	// (image.go); zero is the default (1568 px, 800 KiB), negative no
	// bound.
	ImageMaxSide, ImageMaxBytes int
}

// ParseImageResponses checks an --image-responses value; empty means allow.
func ParseImageResponses(s string) (string, error) {
	switch s {
	case "", "allow":
		return "allow", nil
	case "omit", "only":
		return s, nil
	}
	return "", fmt.Errorf("unknown --image-responses %q: use allow, omit or only", s)
}

func (o Output) lang() codegen.Language {
	if o.Codegen == "" {
		return codegen.TypeScript
	}
	return o.Codegen
}

// build renders a response with the code section, then redacts secrets
// from its text and applies the image policy: the last pass over every
// answer.
func (env *Env) build(r *Response) *mcp.CallToolResult {
	o := env.Output
	r.codeLines = r.code.Render(o.lang(), o.Secrets.Names())
	r.codeFence = o.lang().Fence()
	res := r.Build()
	if o.Secrets != nil {
		for i, c := range res.Content {
			if t, ok := c.(mcp.TextContent); ok {
				t.Text = o.Secrets.Redact(t.Text)
				res.Content[i] = t
			}
		}
	}
	var text, images []mcp.Content
	for _, c := range res.Content {
		if _, ok := c.(mcp.ImageContent); ok {
			images = append(images, c)
		} else {
			text = append(text, c)
		}
	}
	switch o.ImageResponses {
	case "omit":
		res.Content = text
	case "only":
		if len(images) > 0 && !res.IsError {
			res.Content = images
		}
	}
	return res
}

// aiRef is the form of a ref of upstream's AI snapshot (e12, f1e3): the
// element's code is the locator Playwright resolves it to; any other target
// is printed as the selector it is, as upstream does.
var aiRef = regexp.MustCompile(`^(f\d+)?e\d+$`)

// codeSelector is the Playwright selector of an element for the code
// section, read before the action (the element may be gone after it).
func (c *tabCall) codeSelector(el *page.Element, target string) string {
	return c.codeSelectorIn(c.ctx, el, target)
}

func (c *tabCall) codeSelectorIn(ctx context.Context, el *page.Element, target string) string {
	if c.env.Output.lang() == codegen.None {
		return ""
	}
	if !aiRef.MatchString(target) {
		return target
	}
	if sel, ok := c.recordedSelector(el); ok {
		return sel
	}
	sel, err := el.Selector(ctx)
	if err != nil {
		c.env.Log.Debug().Err(err).Str("target", target).Msg("codegen: no selector")
		return refSelector(target)
	}
	return sel
}

// refSelector is the code's selector for a ref whose locator could not be
// resolved.
func refSelector(ref string) string { return "aria-ref=" + ref }

// codeSelectorLater is codeSelector for an action about to run. With
// beside, for an action that leaves its element in place (typing into a
// field) or changes the page only once the selector is resolved (a click
// presses after two animation frames), the driver resolves the selector
// while the action runs, which saves that round trip's time; otherwise it
// is read now. The returned function gives the selector, waiting at most
// besideWait once the action is over (a page the action left busy may
// never answer) before printing the ref.
func (c *tabCall) codeSelectorLater(el *page.Element, target string, beside bool) func() string {
	if _, recorded := c.recordedSelector(el); recorded || !beside || c.env.Output.lang() == codegen.None || !aiRef.MatchString(target) {
		sel := c.codeSelector(el, target)
		return func() string { return sel }
	}
	ctx, cancel := context.WithCancel(c.ctx)
	done := make(chan string, 1)
	go func() { done <- c.codeSelectorIn(ctx, el, target) }()
	return func() string {
		defer cancel()
		wait := time.NewTimer(besideWait)
		defer wait.Stop()
		select {
		case sel := <-done:
			return sel
		case <-wait.C:
			return refSelector(target)
		}
	}
}

// besideWait bounds the wait for a selector resolved beside an action, once
// the action is over; it takes a round trip or two, which on a busy machine
// took over a second (the code then named the ref).
const besideWait = 3 * time.Second

// lookupSecret is what to type for text (a secret's value for its name) and
// how the code shows it.
func (c *tabCall) lookupSecret(text string) (value, codeText string, secret bool) {
	v, ok := c.env.Output.Secrets.Lookup(text)
	if ok {
		return v, "SECRET_" + text, true
	}
	return text, text, false
}

// code adds a line of upstream's hand-written TypeScript to the call's code
// section; upstream prints these as they are whatever --codegen says.
func (c *tabCall) code(line string) { c.resp.Code().Add(line) }

// tsLocator is an element as a TypeScript locator on page, for a code
// line: "page.getByRole('button', { name: 'Save' })".
func (c *tabCall) tsLocator(el *page.Element, target string) string {
	if c.env.Output.lang() == codegen.None {
		return ""
	}
	return "page." + codegen.AsLocator(codegen.TypeScript, c.codeSelector(el, target))
}
