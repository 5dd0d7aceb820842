package tools

import (
	"fmt"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
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

// act runs the steps of an action on the tab and settles (page.Tab.Act):
// a dialog or file chooser the action opens ends it early.
func (c *tabCall) act(steps ...page.Step) error {
	return c.tab.Act(c.ctx, steps...)
}

// settle waits, bounded, for what happened since the tab's counters were at
// navBefore and seq.
func (c *tabCall) settle(navBefore, seq int) {
	c.tab.Settle(c.ctx, navBefore, seq)
}

func click(c *tabCall) error {
	target := c.args.String("target", "")
	el, err := c.locateToAct(target)
	if err != nil {
		return err
	}
	count := 1
	if c.args.Bool("doubleClick", false) {
		count = 2
	}
	// Playwright presses only after the element has been stable for two
	// animation frames: the selector is resolved well before that.
	codeSel := c.codeSelectorLater(el, target, true)
	err = c.act(el.Click(page.ClickOptions{
		Button:    c.args.String("button", "left"),
		Modifiers: c.args.Strings("modifiers"),
		Double:    c.args.Bool("doubleClick", false),
	}))
	c.resp.Code().Action(codegen.Action{Name: "click", Selector: codeSel(),
		Button: c.args.String("button", "left"), Modifiers: c.args.Strings("modifiers"), ClickCount: count})
	return err
}

// maxTypeText bounds text typed or filled in one call.
const maxTypeText = 256 << 10

func typeText(c *tabCall) error {
	text := c.args.String("text", "")
	if len(text) > maxTypeText {
		return fmt.Errorf("text is %d bytes; at most %d can be typed in one call — split it, or set the value with browser_evaluate", len(text), maxTypeText)
	}
	target := c.args.String("target", "")
	el, err := c.locateToAct(target)
	if err != nil {
		return err
	}
	slowly := c.args.Bool("slowly", false)
	if slowly && len(text) > 4096 {
		return fmt.Errorf("slowly types one key at a time; %d characters is too many (at most 4096)", len(text))
	}
	// Text equal to a --secrets name is typed as the secret's value.
	value, codeText, secret := c.lookupSecret(text)
	submit := c.args.Bool("submit", false)
	// The field stays where it is while text goes in; a submit may take
	// it away, so then its selector is read before.
	codeSel := c.codeSelectorLater(el, target, !submit)
	steps := []page.Step{el.Fill(value)}
	if slowly {
		steps = []page.Step{el.Type(value)}
	}
	c.typed = &value
	if submit {
		steps = append(steps, el.Press("Enter"))
	}
	err = c.act(steps...)
	sel := codeSel()
	if slowly {
		// Upstream prints this line in TypeScript whatever --codegen says.
		arg := codegen.Quote(text)
		if secret {
			arg = codegen.SecretCode(c.env.Output.lang(), text)
		}
		c.resp.Code().Add("await page." + codegen.AsLocator(codegen.TypeScript, sel) + ".pressSequentially(" + arg + ");")
	} else {
		c.resp.Code().Action(codegen.Action{Name: "fill", Selector: sel, Text: codeText})
	}
	if submit {
		c.resp.Code().Action(codegen.Action{Name: "press", Selector: sel, Key: "Enter"})
	}
	return err
}

// maxKeyName bounds a browser_press_key key: the longest combination of
// modifiers and a key name is far shorter.
const maxKeyName = 100

func pressKey(c *tabCall) error {
	key := c.args.String("key", "")
	if strings.TrimSpace(key) == "" {
		return fmt.Errorf("key is empty: pass a key name like Enter, ArrowLeft or a character")
	}
	if n := len(key); n > maxKeyName {
		return fmt.Errorf("key is %d characters long: pass one key name like Enter, ArrowLeft or Control+A, or type text with browser_type", n)
	}
	c.resp.Code().Add("// Press " + key)
	c.resp.Code().Add("await page.keyboard.press(" + codegen.Quote(key) + ");")
	return c.act(c.tab.PressKey(key))
}

func hover(c *tabCall) error {
	target := c.args.String("target", "")
	el, err := c.locateToAct(target)
	if err != nil {
		return err
	}
	c.resp.Code().Action(codegen.Action{Name: "hover", Selector: c.codeSelector(el, target)})
	return c.act(el.Hover())
}

func drag(c *tabCall) error {
	from, err := c.locateToAct(c.args.String("startTarget", ""))
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	to, err := c.locateToAct(c.args.String("endTarget", ""))
	if err != nil {
		return fmt.Errorf("end: %w", err)
	}
	// Upstream prints this line in TypeScript whatever --codegen says, and
	// only once the drag succeeded.
	var line string
	if c.env.Output.lang() != codegen.None {
		a, b := c.codeSelector(from, c.args.String("startTarget", "")), c.codeSelector(to, c.args.String("endTarget", ""))
		line = "await page." + codegen.AsLocator(codegen.TypeScript, a) + ".dragTo(page." + codegen.AsLocator(codegen.TypeScript, b) + ");"
	}
	if err := c.act(from.DragTo(to)); err != nil {
		return err
	}
	if line != "" {
		c.resp.Code().Add(line)
	}
	return nil
}

func selectOption(c *tabCall) error {
	target := c.args.String("target", "")
	el, err := c.locateToAct(target)
	if err != nil {
		return err
	}
	c.resp.Code().Action(codegen.Action{Name: "select", Selector: c.codeSelector(el, target), Options: c.args.Strings("values")})
	return c.act(el.SelectOption(c.args.Strings("values")))
}

func fillForm(c *tabCall) error {
	fields := c.args.Objects("fields")
	if len(fields) == 0 {
		return fmt.Errorf("fields is empty: pass at least one {target, name, type, value}")
	}
	var steps []page.Step
	for i, f := range fields {
		target, _ := f["target"].(string)
		el, err := c.locateToAct(target)
		if err != nil {
			return fmt.Errorf("field %d (%s): %w", i+1, quoteValue(f["name"]), err)
		}
		name, _ := f["name"].(string)
		typ, _ := f["type"].(string)
		value, _ := f["value"].(string)
		if len(value) > maxTypeText {
			return fmt.Errorf("field %d (%s): value is %d bytes, at most %d", i+1, clip.Short(name), len(value), maxTypeText)
		}
		if typ == "checkbox" && value != "true" && value != "false" {
			return fmt.Errorf("field %d (%s): a checkbox value must be \"true\" or \"false\", got %s", i+1, clip.Short(name), clip.Quote(value))
		}
		sel := c.codeSelector(el, target)
		switch typ {
		case "textbox", "slider":
			v, codeText, _ := c.lookupSecret(value)
			steps = append(steps, el.Fill(v).Named("fill "+name))
			c.resp.Code().Action(codegen.Action{Name: "fill", Selector: sel, Text: codeText})
		case "checkbox":
			steps = append(steps, el.SetChecked(value == "true").Named("fill "+name))
			c.resp.Code().Action(codegen.Action{Name: map[bool]string{true: "check", false: "uncheck"}[value == "true"], Selector: sel})
		case "radio":
			steps = append(steps, el.Check().Named("fill "+name))
			c.resp.Code().Action(codegen.Action{Name: map[bool]string{true: "check", false: "uncheck"}[value == "true"], Selector: sel})
		case "combobox":
			steps = append(steps, el.SelectOption([]string{value}).Named("fill "+name))
			c.resp.Code().Action(codegen.Action{Name: "select", Selector: sel, Options: []string{value}})
		}
	}
	return c.act(steps...)
}

// maxDropBytes bounds the files dropped in one call.
const maxDropBytes = 32 << 20

func drop(c *tabCall) error {
	paths := c.args.Strings("paths")
	data, _ := c.args.Raw("data").(map[string]any)
	if len(paths) == 0 && len(data) == 0 {
		return fmt.Errorf("pass paths, data or both: there is nothing to drop")
	}
	el, err := c.locateToAct(c.args.String("target", ""))
	if err != nil {
		return err
	}
	total := 0
	in, err := c.inputFiles(paths) // through the allowed roots (files.go)
	if err != nil {
		return err
	}
	for _, f := range in {
		if total += len(f.Data); total > maxDropBytes {
			return fmt.Errorf("files to drop exceed %d MiB", maxDropBytes>>20)
		}
	}
	items := map[string]string{}
	for k, v := range data {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("data %q: want a string value, got %v", k, v)
		}
		items[k] = s
	}
	payload := codegen.Object{"files": codegen.Omitted, "data": codegen.Omitted}
	switch len(paths) {
	case 0:
	case 1:
		payload["files"] = paths[0]
	default:
		payload["files"] = paths
	}
	if c.args.Has("data") {
		d := codegen.Object{}
		for k, v := range data {
			d[k] = v
		}
		payload["data"] = d
	}
	codeLine := "await " + c.tsLocator(el, c.args.String("target", "")) + ".drop(" + codegen.FormatObject(payload, false) + ");"
	// The browser's own drag events (trusted), as a person dragging files
	// onto the element makes.
	if err := c.act(el.Drop(in, items)); err != nil {
		return err
	}
	c.code(codeLine)
	return nil
}
