package page

import (
	"context"
	"fmt"
)

// Highlights: overlays drawn over elements for a human watching the
// browser (browser_highlight). They are aria-hidden, so snapshots do not
// see them.

// highlightJS draws (or moves) a highlight box over an element.
const highlightJS = `(el, [key, element, style]) => {
	const r = el.getBoundingClientRect();
	let box = Array.from(document.querySelectorAll('[data-cloakmcp-highlight]')).find(b => b.getAttribute('data-cloakmcp-highlight') === key);
	if (!box) {
		box = document.createElement('div');
		box.setAttribute('data-cloakmcp-highlight', key);
		box.setAttribute('aria-hidden', 'true');
		document.documentElement.appendChild(box);
	}
	box.setAttribute('data-cloakmcp-element', element);
	box.style.cssText = 'position:absolute;box-sizing:border-box;pointer-events:none;z-index:2147483647;' +
		'outline:2px solid #ff00ff;background:rgba(255,0,255,0.12);' +
		'left:' + (r.left + scrollX) + 'px;top:' + (r.top + scrollY) + 'px;width:' + r.width + 'px;height:' + r.height + 'px;' + style;
	return [r.left, r.top, r.width, r.height].map(Math.round);
}`

// hideHighlightsJS removes the highlights of a key, of an element
// description, or all of them when both are empty.
const hideHighlightsJS = `([key, element]) => {
	let n = 0;
	for (const b of document.querySelectorAll('[data-cloakmcp-highlight]')) {
		const all = !key && !element;
		if (all || (key && b.getAttribute('data-cloakmcp-highlight') === key) || (element && b.getAttribute('data-cloakmcp-element') === element)) {
			b.remove();
			n++;
		}
	}
	return n;
}`

// Highlight draws a highlight over the element, or moves the one drawn
// under key; label is the agent's description of the element and style
// extra inline CSS for the overlay. It returns the element's box in the
// viewport, rounded: left, top, width, height.
func (e *Element) Highlight(ctx context.Context, key, label, style string) ([4]int, error) {
	v, err := e.Evaluate(ctx, highlightJS, []any{key, label, style})
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
	v, err := t.Evaluate(ctx, hideHighlightsJS, []any{key, label})
	if err != nil {
		return 0, err
	}
	n, _ := toFloat(v)
	return int(n), nil
}
