package page

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// Screenshots of a tab or an element, and the labelled screenshot: boxes
// with names drawn over the page while the picture is taken.

// ScreenshotOptions shape a screenshot.
type ScreenshotOptions struct {
	// Type is "png", "jpeg" or "webp"; if empty, png.
	Type string
	// Quality is the JPEG or WebP quality, 0 to 100; if zero, Playwright's
	// default. Ignored for PNG.
	Quality int
	// DeviceScale takes the picture in device pixels; if false, in CSS
	// pixels (one image pixel per CSS pixel).
	DeviceScale bool
	// FullPage takes the full scrollable page instead of the viewport
	// (tab screenshots only).
	FullPage bool
}

// keepCaret leaves the text caret as it is: Playwright's default hides it
// by setting an inline caret-color on every input, textarea and editable
// element of the page and restoring it after, attribute changes a page's
// observer sees (and a style attribute left on elements that had none).
var keepCaret = playwright.ScreenshotCaretInitial

func (o ScreenshotOptions) typ() *playwright.ScreenshotType {
	t := playwright.ScreenshotType(o.Type)
	if o.Type == "" {
		t = "png"
	}
	return &t
}

func (o ScreenshotOptions) scale() *playwright.ScreenshotScale {
	if o.DeviceScale {
		return playwright.ScreenshotScaleDevice
	}
	return playwright.ScreenshotScaleCss
}

func (o ScreenshotOptions) quality() *int {
	if o.Quality <= 0 || *o.typ() == "png" {
		return nil
	}
	return playwright.Int(o.Quality)
}

// Screenshot takes a picture of the tab's viewport (or full page).
func (t *Tab) Screenshot(ctx context.Context, o ScreenshotOptions) ([]byte, error) {
	opts := playwright.PageScreenshotOptions{Type: o.typ(), Scale: o.scale(), FullPage: playwright.Bool(o.FullPage), Quality: o.quality(), Caret: keepCaret}
	return call(ctx, t.c, "take a screenshot", stopOn{modal: t}, func() ([]byte, error) { return t.p.Screenshot(opts) })
}

// Screenshot takes a picture of the element. FullPage does not apply.
func (e *Element) Screenshot(ctx context.Context, o ScreenshotOptions) ([]byte, error) {
	if o.FullPage {
		return nil, errors.New("fullPage cannot be used with an element screenshot")
	}
	opts := playwright.LocatorScreenshotOptions{Type: o.typ(), Scale: o.scale(), Quality: o.quality(), Caret: keepCaret}
	return call(ctx, e.tab.c, "take a screenshot of "+e.Target, stopOn{modal: e.tab}, func() ([]byte, error) { return e.loc.Screenshot(opts) })
}

// InnerSize is the size of the tab's window content (innerWidth,
// innerHeight) in CSS pixels.
func (t *Tab) InnerSize(ctx context.Context) (width, height float64, err error) {
	v, err := t.Read(ctx, `() => [innerWidth, innerHeight]`)
	if err != nil {
		return 0, 0, err
	}
	s, ok := v.([]any)
	if !ok || len(s) != 2 {
		return 0, 0, fmt.Errorf("read the window size: unexpected %v", v)
	}
	width, _ = toFloat(s[0])
	height, _ = toFloat(s[1])
	return width, height, nil
}

// Label is a box drawn on a labelled screenshot, with its text (a ref).
type Label struct {
	Text string
	// X, Y, W, H are the box in CSS pixels, relative to the viewport.
	X, Y, W, H float64
}

// labelsJS draws the labels in an aria-hidden overlay (document
// coordinates, so full-page shots line up) and returns the scroll offset.
// It runs in the isolated world: the page sees none of its calls, and the
// overlay carries no mark of ours; the world keeps it (a global the page
// cannot reach) for removeLabelsJS.
const labelsJS = `(labels) => {
	globalThis.labelsOverlay?.remove();
	const root = document.createElement('div');
	root.setAttribute('aria-hidden', 'true');
	root.style.cssText = 'position:absolute;left:0;top:0;width:0;height:0;z-index:2147483647;pointer-events:none;';
	for (const l of labels) {
		const box = document.createElement('div');
		box.style.cssText = 'position:absolute;box-sizing:border-box;border:2px solid #ff00ff;' +
			'left:' + (l.X + scrollX) + 'px;top:' + (l.Y + scrollY) + 'px;width:' + l.W + 'px;height:' + l.H + 'px;';
		const tag = document.createElement('div');
		tag.textContent = l.Ref;
		tag.style.cssText = 'position:absolute;font:bold 11px/13px monospace;color:#fff;background:#ff00ff;padding:0 2px;white-space:nowrap;' +
			'left:' + (l.X + scrollX) + 'px;top:' + Math.max(0, l.Y + scrollY - 13) + 'px;';
		root.appendChild(box);
		root.appendChild(tag);
	}
	// Built whole, then added once: the page's observers see one node come
	// (and go), no attribute of theirs change.
	document.documentElement.appendChild(root);
	globalThis.labelsOverlay = root;
	return [scrollX, scrollY, innerWidth, innerHeight];
}`

const removeLabelsJS = `() => { globalThis.labelsOverlay?.remove(); globalThis.labelsOverlay = undefined; }`

// removeLabelsTimeout bounds removing the overlay, which runs even when the
// caller's context has ended: the page must not keep it.
const removeLabelsTimeout = 5 * time.Second

// LabeledScreenshot draws labels over the page, takes a screenshot and
// removes them again. scrollX and scrollY are the page's scroll offset when
// the picture was taken (labels on a full page sit at their box plus it).
func (t *Tab) LabeledScreenshot(ctx context.Context, labels []Label, o ScreenshotOptions) (data []byte, scrollX, scrollY float64, err error) {
	// The overlay comes and goes in the DOM: the next snapshot is taken afresh.
	defer t.invalidateWatch()
	arg := make([]map[string]any, len(labels))
	for i, l := range labels {
		arg[i] = map[string]any{"Ref": l.Text, "X": l.X, "Y": l.Y, "W": l.W, "H": l.H}
	}
	// Drawn and removed from the isolated world: no call of ours in the
	// page's (the overlay's nodes are in its DOM while the picture is taken).
	scroll, err := t.isolated(ctx, "draw the labels", labelsJS, arg)
	// Whatever happens next, the overlay goes.
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeLabelsTimeout)
		defer cancel()
		_, _ = t.isolated(rctx, "remove the labels", removeLabelsJS)
	}()
	if err != nil {
		return nil, 0, 0, fmt.Errorf("draw the labels: %w", err)
	}
	if s, ok := scroll.([]any); ok && len(s) >= 2 {
		scrollX, _ = toFloat(s[0])
		scrollY, _ = toFloat(s[1])
	}
	data, err = t.Screenshot(ctx, o)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("screenshot: %w", err)
	}
	return data, scrollX, scrollY, nil
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}
