package page

import (
	"context"
	"fmt"

	"github.com/mxschmitt/playwright-go"
)

// Highlights: overlays drawn over elements for a human watching the
// browser (browser_highlight). They are aria-hidden, so snapshots do not
// see them.

// highlightJS draws (or moves) a highlight box over a box of the viewport
// (x, y, w, h, from Playwright's bounding box of the element). It runs in
// the tab's isolated world: the page sees none of its calls, and the box
// carries no mark of ours; the world keeps the boxes by key (a global the
// page cannot reach) for hideHighlightsJS.
const highlightJS = `([key, element, style, x, y, w, h]) => {
	const boxes = globalThis.highlights || (globalThis.highlights = new Map());
	const old = boxes.get(key);
	// A new box each time, built whole and then added: the page's
	// observers see a node come, never an attribute change.
	const box = document.createElement('div');
	box.setAttribute('aria-hidden', 'true');
	box.style.cssText = 'position:absolute;box-sizing:border-box;pointer-events:none;z-index:2147483647;' +
		'outline:2px solid #ff00ff;background:rgba(255,0,255,0.12);' +
		'left:' + (x + scrollX) + 'px;top:' + (y + scrollY) + 'px;width:' + w + 'px;height:' + h + 'px;' + style;
	if (old) old.box.remove();
	document.documentElement.appendChild(box);
	boxes.set(key, {box, element});
	return [x, y, w, h].map(Math.round);
}`

// hideHighlightsJS removes the highlights of a key, of an element
// description, or all of them when both are empty.
const hideHighlightsJS = `([key, element]) => {
	const boxes = globalThis.highlights;
	if (!boxes) return 0;
	let n = 0;
	const all = !key && !element;
	for (const [k, b] of boxes) {
		if (all || (key && k === key) || (element && b.element === element)) {
			if (b.box.isConnected) n++;
			b.box.remove();
			boxes.delete(k);
		}
	}
	return n;
}`

// Highlight draws a highlight over the element, or moves the one drawn
// under key; label is the agent's description of the element and style
// extra inline CSS for the overlay. It returns the element's box in the
// viewport, rounded: left, top, width, height.
func (e *Element) Highlight(ctx context.Context, key, label, style string) ([4]int, error) {
	// The overlay comes and goes in the DOM: the next snapshot is taken afresh.
	defer e.tab.invalidateWatch()
	// Where the element is, from Playwright (its utility world); the box is
	// drawn from the tab's isolated world, on the main frame's document.
	r, err := call(ctx, e.tab.c, "highlight "+e.Target, stopOn{modal: e.tab}, func() (*playwright.Rect, error) { return e.loc.BoundingBox() })
	if err != nil {
		return [4]int{}, err
	}
	if r == nil {
		return [4]int{}, fmt.Errorf("%s is not visible: nothing to highlight; scroll it into view or take a new snapshot", e.Target)
	}
	v, err := e.tab.isolated(ctx, "highlight "+e.Target, highlightJS, []any{key, label, style, r.X, r.Y, r.Width, r.Height})
	if err != nil {
		return [4]int{}, err
	}
	var box [4]int
	l, _ := v.([]any)
	if len(l) != 4 {
		return box, fmt.Errorf("highlight %s: unexpected result %v", e.Target, v)
	}
	for i, x := range l {
		f, _ := toFloat(x)
		box[i] = int(f)
	}
	return box, nil
}

// HideHighlights removes the highlights drawn under key or for the element
// description label, or every highlight when both are empty, and returns
// how many it removed.
func (t *Tab) HideHighlights(ctx context.Context, key, label string) (int, error) {
	defer t.invalidateWatch()
	v, err := t.isolated(ctx, "remove highlights", hideHighlightsJS, []any{key, label})
	if err != nil {
		return 0, err
	}
	n, _ := toFloat(v)
	return int(n), nil
}
