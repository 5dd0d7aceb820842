package page

import (
	"fmt"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// Mouse steps at viewport coordinates (CSS pixels, as in a screenshot at
// scale css) and element steps beyond element.go's, all run by Tab.Act.

// MouseClickOptions shape a click at a point.
type MouseClickOptions struct {
	// Button is "left", "right" or "middle"; if empty, left.
	Button string
	// Count is the number of clicks; if zero, 1.
	Count int
	// Delay is the time between mouse down and mouse up; if zero, none.
	Delay time.Duration
}

func mouseButton(b string) *playwright.MouseButton {
	if b == "" {
		b = "left"
	}
	v := playwright.MouseButton(b)
	return &v
}

// MouseClick is the step that clicks at x, y.
func (t *Tab) MouseClick(x, y float64, o MouseClickOptions) Step {
	opts := playwright.MouseClickOptions{Button: mouseButton(o.Button)}
	if o.Count > 0 {
		opts.ClickCount = playwright.Int(o.Count)
	}
	if o.Delay > 0 {
		opts.Delay = playwright.Float(float64(o.Delay) / float64(time.Millisecond))
	}
	return Step{op: fmt.Sprintf("click at %g, %g", x, y), fn: func() error { return t.p.Mouse().Click(x, y, opts) }}
}

// MouseMove is the step that moves the mouse to x, y.
func (t *Tab) MouseMove(x, y float64) Step {
	return Step{op: fmt.Sprintf("move the mouse to %g, %g", x, y), fn: func() error { return t.p.Mouse().Move(x, y) }}
}

// MouseDown is the step that presses a mouse button ("left", "right",
// "middle"; if empty, left) where the mouse is.
func (t *Tab) MouseDown(button string) Step {
	b := mouseButton(button)
	return Step{op: "press the " + string(*b) + " mouse button", fn: func() error {
		return t.p.Mouse().Down(playwright.MouseDownOptions{Button: b})
	}}
}

// MouseUp is the step that releases a mouse button (as MouseDown).
func (t *Tab) MouseUp(button string) Step {
	b := mouseButton(button)
	return Step{op: "release the " + string(*b) + " mouse button", fn: func() error {
		return t.p.Mouse().Up(playwright.MouseUpOptions{Button: b})
	}}
}

// MouseDrag is the step that drags with the left button from x1, y1 to
// x2, y2 (in 10 moves, so pages that track the pointer see a drag).
func (t *Tab) MouseDrag(x1, y1, x2, y2 float64) Step {
	return Step{op: fmt.Sprintf("drag from %g, %g to %g, %g", x1, y1, x2, y2), fn: func() error {
		m := t.p.Mouse()
		if err := m.Move(x1, y1); err != nil {
			return err
		}
		if err := m.Down(); err != nil {
			return err
		}
		if err := m.Move(x2, y2, playwright.MouseMoveOptions{Steps: playwright.Int(10)}); err != nil {
			return err
		}
		return m.Up()
	}}
}

// MouseWheel is the step that scrolls the mouse wheel by dx, dy.
func (t *Tab) MouseWheel(dx, dy float64) Step {
	return Step{op: fmt.Sprintf("scroll the mouse wheel by %g, %g", dx, dy), fn: func() error { return t.p.Mouse().Wheel(dx, dy) }}
}

// ScrollIntoView is the step that scrolls the page until the element is
// visible.
func (e *Element) ScrollIntoView() Step {
	return Step{op: "scroll " + e.Target + " into view", fn: func() error { return e.loc.ScrollIntoViewIfNeeded() }}
}

// SetInputFiles is the step that sets the files of a file input (read by
// the caller); no files clears it.
func (e *Element) SetInputFiles(files []InputFile) Step {
	p := payloads(files)
	return Step{op: "set the files of " + e.Target, fn: func() error { return e.loc.SetInputFiles(p) }}
}

// InputFile is a file handed to the page (an upload), read by the caller
// from where it is allowed to read: the browser gets the bytes, never a path,
// so what it receives is what the caller checked.
type InputFile struct {
	// Name is the file name the page sees (no directories).
	Name string
	// MimeType is its type; if empty, derived from Name by the browser.
	MimeType string
	// Data is its content.
	Data []byte
}

// MaxInputFileBytes bounds the files of one upload: they travel to the
// driver as one message.
const MaxInputFileBytes = 48 << 20

// payloads are files as the driver takes them; an empty list (clear the
// input) stays a non-nil empty list.
func payloads(files []InputFile) []playwright.InputFile {
	out := make([]playwright.InputFile, len(files))
	for i, f := range files {
		out[i] = playwright.InputFile{Name: f.Name, MimeType: f.MimeType, Buffer: f.Data}
	}
	return out
}
