package tools

import (
	"encoding/base64"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mxschmitt/playwright-go"
)

func interactTools() []*Tool {
	act := tabOpts{snapshot: snapDiff}
	return []*Tool{
		{Def: upstreamDef("browser_click"), Cap: "core", Aliases: refAlias, Handle: tabTool("browser_click", act, click)},
		{Def: upstreamDef("browser_type"), Cap: "core", Aliases: refAlias, Handle: tabTool("browser_type", act, typeText)},
		{Def: upstreamDef("browser_press_key"), Cap: "core", Handle: tabTool("browser_press_key", act, pressKey)},
		{Def: upstreamDef("browser_hover"), Cap: "core", Aliases: refAlias, Handle: tabTool("browser_hover", act, hover)},
		{Def: upstreamDef("browser_drag"), Cap: "core", Aliases: map[string]string{"startRef": "startTarget", "endRef": "endTarget"}, Handle: tabTool("browser_drag", act, drag)},
		{Def: upstreamDef("browser_select_option"), Cap: "core", Aliases: refAlias, Handle: tabTool("browser_select_option", act, selectOption)},
		{Def: upstreamDef("browser_fill_form"), Cap: "core", Handle: tabTool("browser_fill_form", act, fillForm)},
		{Def: upstreamDef("browser_drop"), Cap: "core", Aliases: refAlias, Handle: tabTool("browser_drop", act, drop)},
	}
}

// act runs an action on the page and settles: it returns early when the
// action opens a dialog or file chooser (the page is then blocked), and
// otherwise waits, bounded, for what the action set off.
func (c *tabCall) act(action func() error) error {
	navBefore := c.tab.LastNavSeq()
	seq := c.tab.Seq()
	modal := c.tab.ModalOpened()
	done := make(chan error, 1)
	go func() { done <- safely(action) }()
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
	c.settle(navBefore, seq)
	return nil
}

// settle waits for what an action set off, each step bounded and none a
// fixed sleep: a navigation it started (DOM ready, then load or a quiet
// network), and the requests it started. Handlers' synchronous DOM updates
// have landed when the action returns; the snapshot that follows runs after
// the page's microtasks.
func (c *tabCall) settle(navBefore, seq int) {
	c.roundTrip()
	if c.tab.LastNavSeq() != navBefore {
		_ = c.tab.Page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateDomcontentloaded, Timeout: playwright.Float(5000)})
		waitLoaded(c.tab)
		return
	}
	deadline := time.Now().Add(2 * time.Second)
	for c.tab.PendingSince(seq) > 0 && time.Now().Before(deadline) {
		select {
		case <-c.ctx.Done():
			return
		case <-c.tab.ModalOpened():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// roundTrip makes one bounded call into the page, so events the action set
// off in the browser (a popup opening, a navigation starting) have reached
// us before we look.
func (c *tabCall) roundTrip() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = safely(func() error { _, err := c.tab.Page.Evaluate("() => 0"); return err })
	}()
	select {
	case <-done:
	case <-c.tab.ModalOpened():
	case <-time.After(300 * time.Millisecond):
	case <-c.ctx.Done():
	}
}

func click(c *tabCall) error {
	loc, err := c.locate(c.args.String("target", ""))
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

// maxTypeText bounds text typed or filled in one call.
const maxTypeText = 256 << 10

func typeText(c *tabCall) error {
	text := c.args.String("text", "")
	if len(text) > maxTypeText {
		return fmt.Errorf("text is %d bytes; at most %d can be typed in one call — split it, or set the value with browser_evaluate", len(text), maxTypeText)
	}
	loc, err := c.locate(c.args.String("target", ""))
	if err != nil {
		return err
	}
	slowly := c.args.Bool("slowly", false)
	if slowly && len(text) > 4096 {
		return fmt.Errorf("slowly types one key at a time; %d characters is too many (at most 4096)", len(text))
	}
	return c.act(func() error {
		if slowly {
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

func pressKey(c *tabCall) error {
	key := c.args.String("key", "")
	if strings.TrimSpace(key) == "" {
		return fmt.Errorf("key is empty: pass a key name like Enter, ArrowLeft or a character")
	}
	return c.act(func() error { return c.tab.Page.Keyboard().Press(key) })
}

func hover(c *tabCall) error {
	loc, err := c.locate(c.args.String("target", ""))
	if err != nil {
		return err
	}
	return c.act(func() error { return loc.Hover() })
}

func drag(c *tabCall) error {
	from, err := c.locate(c.args.String("startTarget", ""))
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	to, err := c.locate(c.args.String("endTarget", ""))
	if err != nil {
		return fmt.Errorf("end: %w", err)
	}
	return c.act(func() error { return from.DragTo(to) })
}

func selectOption(c *tabCall) error {
	loc, err := c.locate(c.args.String("target", ""))
	if err != nil {
		return err
	}
	values := c.args.Strings("values")
	return c.act(func() error {
		_, err := loc.SelectOption(playwright.SelectOptionValues{ValuesOrLabels: &values})
		return err
	})
}

func fillForm(c *tabCall) error {
	fields := c.args.Objects("fields")
	if len(fields) == 0 {
		return fmt.Errorf("fields is empty: pass at least one {target, name, type, value}")
	}
	type step struct {
		loc              playwright.Locator
		name, typ, value string
	}
	var steps []step
	for i, f := range fields {
		target, _ := f["target"].(string)
		loc, err := c.locate(target)
		if err != nil {
			return fmt.Errorf("field %d (%v): %w", i+1, f["name"], err)
		}
		name, _ := f["name"].(string)
		typ, _ := f["type"].(string)
		value, _ := f["value"].(string)
		if len(value) > maxTypeText {
			return fmt.Errorf("field %d (%s): value is %d bytes, at most %d", i+1, name, len(value), maxTypeText)
		}
		if typ == "checkbox" && value != "true" && value != "false" {
			return fmt.Errorf("field %d (%s): a checkbox value must be \"true\" or \"false\", got %q", i+1, name, value)
		}
		steps = append(steps, step{loc, name, typ, value})
	}
	return c.act(func() error {
		for _, s := range steps {
			var err error
			switch s.typ {
			case "textbox", "slider":
				err = s.loc.Fill(s.value)
			case "checkbox":
				err = s.loc.SetChecked(s.value == "true")
			case "radio":
				err = s.loc.Check()
			case "combobox":
				_, err = s.loc.SelectOption(playwright.SelectOptionValues{ValuesOrLabels: &[]string{s.value}})
			}
			if err != nil {
				return fmt.Errorf("fill %s: %w", s.name, err)
			}
		}
		return nil
	})
}

// maxDropBytes bounds the files dropped in one call (they travel through the
// driver as base64).
const maxDropBytes = 32 << 20

func drop(c *tabCall) error {
	paths := c.args.Strings("paths")
	data, _ := c.args.Raw("data").(map[string]any)
	if len(paths) == 0 && len(data) == 0 {
		return fmt.Errorf("pass paths, data or both: there is nothing to drop")
	}
	loc, err := c.locate(c.args.String("target", ""))
	if err != nil {
		return err
	}
	var files []any
	total := 0
	for _, p := range paths {
		p, err := c.env.inputPath(p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if total += len(b); total > maxDropBytes {
			return fmt.Errorf("files to drop exceed %d MiB", maxDropBytes>>20)
		}
		typ := mime.TypeByExtension(filepath.Ext(p))
		if typ == "" {
			typ = "application/octet-stream"
		}
		files = append(files, map[string]any{"Name": filepath.Base(p), "Type": typ, "B64": base64.StdEncoding.EncodeToString(b)})
	}
	items := map[string]any{}
	for k, v := range data {
		items[k] = v
	}
	arg := map[string]any{"files": files, "data": items}
	return c.act(func() error {
		_, err := loc.Evaluate(`(el, arg) => {
			const dt = new DataTransfer();
			for (const [type, value] of Object.entries(arg.data)) dt.setData(type, value);
			for (const f of arg.files) {
				const bytes = Uint8Array.from(atob(f.B64), ch => ch.charCodeAt(0));
				dt.items.add(new File([bytes], f.Name, { type: f.Type }));
			}
			const r = el.getBoundingClientRect();
			const opts = { bubbles: true, cancelable: true, dataTransfer: dt, clientX: r.x + r.width / 2, clientY: r.y + r.height / 2 };
			el.dispatchEvent(new DragEvent('dragenter', opts));
			el.dispatchEvent(new DragEvent('dragover', opts));
			el.dispatchEvent(new DragEvent('drop', opts));
		}`, arg)
		return err
	})
}

// safely runs fn, turning a panic (from a library on a request path) into an
// error so it cannot take the server down.
func safely(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: %v", p)
		}
	}()
	return fn()
}
