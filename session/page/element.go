package page

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
)

// Steps an agent action is made of (run by Tab.Act), and the reads of an
// element, all through the door.

// ClickOptions shape a click.
type ClickOptions struct {
	// Button is "left", "right" or "middle"; if empty, left.
	Button string
	// Modifiers are keys held during the click: Alt, Control,
	// ControlOrMeta, Meta, Shift.
	Modifiers []string
	// Double makes it a double click.
	Double bool
}

// Click is the step that clicks the element.
func (e *Element) Click(o ClickOptions) Step {
	button := playwright.MouseButton("left")
	if o.Button != "" {
		button = playwright.MouseButton(o.Button)
	}
	var mods []playwright.KeyboardModifier
	for _, m := range o.Modifiers {
		mods = append(mods, playwright.KeyboardModifier(m))
	}
	if o.Double {
		// Playwright's dblclick is a click with clickCount 2; playwright-go's
		// Dblclick options carry a field the 1.64 driver refuses.
		two := 2
		return e.step("double-click "+e.Target, func() error {
			return e.loc.Click(playwright.LocatorClickOptions{Button: &button, Modifiers: mods, ClickCount: &two})
		})
	}
	return e.step("click "+e.Target, func() error {
		return e.loc.Click(playwright.LocatorClickOptions{Button: &button, Modifiers: mods})
	})
}

// Hover is the step that moves the mouse over the element.
func (e *Element) Hover() Step {
	return e.step("hover "+e.Target, func() error { return e.loc.Hover() })
}

// Fill is the step that sets an input's value at once.
func (e *Element) Fill(value string) Step {
	return e.step("fill "+e.Target, func() error {
		e.tab.noteFill(e.Target, value)
		return e.loc.Fill(value)
	})
}

// Type is the step that types text one key at a time. When the action
// timeout ends the typing, its error is a *TypeTimeoutError that says how
// much of text the field took.
func (e *Element) Type(text string) Step {
	return e.step("type into "+e.Target, func() error {
		// The field's value before, to tell what the typing added; an
		// element without a value (contenteditable) gives none.
		quick := playwright.LocatorInputValueOptions{Timeout: playwright.Float(1000)}
		before, berr := e.loc.InputValue(quick)
		err := e.loc.PressSequentially(text)
		if err == nil || !(errors.Is(err, playwright.ErrTimeout) || strings.Contains(err.Error(), "Timeout ")) {
			return err
		}
		te := &TypeTimeoutError{Total: utf8.RuneCountInString(text), Typed: -1, Timeout: e.tab.c.env.ActionTimeout}
		if berr == nil {
			if after, aerr := e.loc.InputValue(quick); aerr == nil {
				te.Typed = typedCount(before, after, text)
			}
		}
		return te
	})
}

// TypeTimeoutError says typing one key at a time ran out of time, and how
// far it got. It does not wrap Playwright's timeout: the door would take it
// for an element that never became ready.
type TypeTimeoutError struct {
	// Typed is how many characters of the text the field took, or -1 if
	// that cannot be told (no value to read, or one the page rewrote).
	Typed int
	// Total is the number of characters of the text.
	Total int
	// Timeout is the action timeout that ended the typing.
	Timeout time.Duration
}

func (e *TypeTimeoutError) Error() string {
	if e.Typed < 0 {
		return fmt.Sprintf("typing did not finish within %v (%d characters); part of the text may be in the field: check it with browser_snapshot, then type the rest or use slowly: false", e.Timeout, e.Total)
	}
	return fmt.Sprintf("typed %d of %d characters before the %v timeout; the page handles keys slowly: type the remaining %d with another browser_type, or use slowly: false", e.Typed, e.Total, e.Timeout, e.Total-e.Typed)
}

// typedCount is how many leading characters of text a field whose value
// went from before to after took, or -1 when after is not before with a
// prefix of text inserted at one place (the page rewrote the value).
func typedCount(before, after, text string) int {
	if len(after) < len(before) {
		return -1
	}
	n := utf8.RuneCountInString(after) - utf8.RuneCountInString(before)
	added := clip.Prefix(text, n)
	if utf8.RuneCountInString(added) != n {
		return -1
	}
	// The caret may have been anywhere: try every place in before.
	for i := range before {
		if before[:i]+added+before[i:] == after {
			return n
		}
	}
	if before+added == after {
		return n
	}
	return -1
}

// Press is the step that presses a key on the element.
func (e *Element) Press(key string) Step {
	return e.step("press "+key, func() error { return e.loc.Press(key) })
}

// SelectOption is the step that selects options of a <select> by value or
// label.
func (e *Element) SelectOption(values []string) Step {
	return e.step("select in "+e.Target, func() error {
		_, err := e.loc.SelectOption(playwright.SelectOptionValues{ValuesOrLabels: &values})
		return err
	})
}

// SetChecked is the step that checks or unchecks a checkbox or radio.
func (e *Element) SetChecked(checked bool) Step {
	return e.step("check "+e.Target, func() error { return e.loc.SetChecked(checked) })
}

// Check is the step that checks a checkbox or radio.
func (e *Element) Check() Step {
	return e.step("check "+e.Target, func() error { return e.loc.Check() })
}

// step is the step op of the element, run by fn.
func (e *Element) step(op string, fn func() error) Step {
	return Step{on: []*Element{e}, op: op, fn: fn}
}

// DragTo is the step that drags the element onto to.
func (e *Element) DragTo(to *Element) Step {
	return Step{on: []*Element{e, to}, op: "drag " + e.Target + " to " + to.Target, fn: func() error { return e.loc.DragTo(to.loc) }}
}

// Drop is the step that drops files and data (MIME type → value) onto the
// element as a person dragging them from the desktop does: the pointer
// moves there, then the browser's own drag events follow
// (Input.dispatchDragEvent: trusted dragenter and dragover, then drop with
// their DataTransfer). A target whose dragover did not call
// preventDefault refuses the drop, as Playwright's own drop says: the drag
// is cancelled (a dragleave), not dropped onto the page. The files are
// written to a private temporary directory the browser reads them from,
// removed after. A browser on another machine (a CDP endpoint) cannot read
// them: there the drop is Playwright's (events made in the page).
func (e *Element) Drop(files []InputFile, data map[string]string) Step {
	op := "drop onto " + e.Target
	if e.tab.c.env.Endpoint != "" {
		return e.step(op, func() error {
			in := make([]playwright.InputFile, len(files))
			for i, f := range files {
				in[i] = playwright.InputFile{Name: f.Name, MimeType: f.MimeType, Buffer: f.Data}
			}
			return e.loc.Drop(playwright.Payload{Files: in, Data: data})
		})
	}
	return e.step(op, func() error { return e.drop(files, data) })
}

// dropCheckJS, run in the tab's isolated world, notes whether the page's
// handlers accepted the next dragover (called preventDefault): a listener
// of that world, which the page cannot see, on the window, where the event
// ends.
const dropCheckJS = `() => {
	globalThis.dropAccepted = undefined;
	addEventListener('dragover', e => { globalThis.dropAccepted = e.defaultPrevented; }, {once: true});
}`

// dropCheckedJS reads what dropCheckJS noted: true, false, or null when no
// dragover reached the window (its propagation was stopped: accepted if it
// was prevented, which the page's handler then did; taken as accepted).
const dropCheckedJS = `() => globalThis.dropAccepted ?? null`

func (e *Element) drop(files []InputFile, data map[string]string) error {
	t := e.tab
	ctx := context.Background() // the step runs within the action's bounds
	s, err := t.cdpSession(ctx)
	if err != nil {
		return err
	}
	if err := e.loc.ScrollIntoViewIfNeeded(); err != nil {
		return err
	}
	box, err := e.loc.BoundingBox()
	if err != nil {
		return err
	}
	if box == nil {
		return fmt.Errorf("%s is not visible: nothing to drop onto", e.Target)
	}
	x, y := box.X+box.Width/2, box.Y+box.Height/2
	if err := t.p.Mouse().Move(x, y, playwright.MouseMoveOptions{Steps: playwright.Int(5)}); err != nil {
		return err
	}
	var paths []string
	if len(files) > 0 {
		dir, err := t.c.env.TempDir("drop-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		for i, f := range files {
			sub := filepath.Join(dir, strconv.Itoa(i)) // two files may share a name
			if err := os.Mkdir(sub, 0o700); err != nil {
				return err
			}
			p := filepath.Join(sub, filepath.Base(f.Name))
			if err := os.WriteFile(p, f.Data, 0o600); err != nil {
				return err
			}
			paths = append(paths, p)
		}
	}
	items := []any{}
	for typ, v := range data {
		items = append(items, map[string]any{"mimeType": typ, "data": v})
	}
	drag := map[string]any{"items": items, "dragOperationsMask": 1 | 2 | 16} // copy, link, move
	if len(paths) > 0 {
		drag["files"] = paths
	}
	send := func(typ string) error {
		_, err := sendCDP(ctx, s, 0, "Input.dispatchDragEvent", map[string]any{"type": typ, "x": x, "y": y, "data": drag})
		return err
	}
	checked := true
	if _, err := t.isolated(ctx, "watch the drop", dropCheckJS); err != nil {
		checked = false // the drop goes on unchecked
	}
	if err := send("dragEnter"); err != nil {
		return err
	}
	if err := send("dragOver"); err != nil {
		return err
	}
	if checked {
		if v, err := t.isolated(ctx, "watch the drop", dropCheckedJS); err == nil && v == false {
			_ = send("dragCancel")
			return fmt.Errorf("%s did not accept the drop (its dragover handler did not call preventDefault): drop onto the element that handles it", e.Target)
		}
	}
	return send("drop")
}

// Evaluate runs a JavaScript function on the element, (el[, arg]) => …, and
// returns its JSON value, with none of Playwright's frames in a stack the
// page reads (see detached). A dialog the script opens ends the wait with
// ErrModal.
func (e *Element) Evaluate(ctx context.Context, fn string, arg any) (any, error) {
	defer e.tab.invalidateWatch() // as Tab.Evaluate: a script may change what the watch does not see
	e.tab.ranScript()
	if arg == nil {
		group, release := e.tab.evalGroup()
		defer release()
		id, err := e.mainObject(ctx, group)
		if err == nil {
			v, err := e.tab.evaluateMain(ctx, "evaluate on "+e.Target, group, id, fn)
			if !errors.Is(err, errNotMainWorld) {
				return v, err
			}
		} else if !errors.Is(err, errNoHandoff) && !isPageErr(err) {
			return nil, err
		}
	}
	return e.tab.evaluateDetached(ctx, fn, func(src string) (any, error) {
		return watched(ctx, e.tab, "evaluate on "+e.Target, func() (any, error) { return e.loc.Evaluate(src, arg) })
	})
}

// AISnapshot is the AI snapshot of the element's subtree.
func (e *Element) AISnapshot(ctx context.Context, o SnapshotOptions) (string, error) {
	po := o.page(ctx)
	opts := playwright.LocatorAriaSnapshotOptions{Mode: po.Mode, Timeout: po.Timeout, Depth: po.Depth, Boxes: po.Boxes}
	base, _ := e.tab.partBase(ctx)
	defer func() { e.tab.tookPartialAI(base) }()
	return call(ctx, e.tab.c, "snapshot "+e.Target, stopOn{modal: e.tab}, func() (string, error) { return e.loc.AriaSnapshot(opts) })
}
