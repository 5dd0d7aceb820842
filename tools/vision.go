package tools

import (
	"fmt"
	"math"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// visionTools are upstream's --caps=vision coordinate tools (viewport CSS
// pixels, as in a screenshot at scale css), plus the labelled screenshot
// (labels.go).
func visionTools() []*Tool {
	act := tabOpts{snapshot: snapDiff}
	t := func(name string, fn func(*tabCall) error) *Tool {
		return &Tool{Def: upstreamDef(name), Cap: "vision", Handle: tabTool(name, act, fn)}
	}
	return []*Tool{
		t("browser_mouse_click_xy", mouseClick),
		t("browser_mouse_move_xy", mouseMove),
		t("browser_mouse_down", mouseButton(true)),
		t("browser_mouse_up", mouseButton(false)),
		t("browser_mouse_drag_xy", mouseDrag),
		t("browser_mouse_wheel", mouseWheel),
	}
}

// js prints a coordinate as upstream's code lines do.
func js(f float64) string { return codegen.Number(f) }

// maxClickDelay bounds the milliseconds between a click's press and release.
const maxClickDelay = 5000

// maxCoord bounds coordinates: far outside any viewport is a mistake.
const maxCoord = 1e6

func (c *tabCall) coords(names ...string) ([]float64, error) {
	out := make([]float64, len(names))
	for i, n := range names {
		v := c.args.Number(n, 0)
		if math.IsNaN(v) || math.Abs(v) > maxCoord {
			return nil, fmt.Errorf("%s=%v is out of range", n, v)
		}
		out[i] = v
	}
	return out, nil
}

func mouseClick(c *tabCall) error {
	p, err := c.coords("x", "y")
	if err != nil {
		return err
	}
	o := page.MouseClickOptions{Button: c.args.String("button", "left")}
	if c.args.Has("clickCount") {
		n := c.args.Number("clickCount", 1)
		if n != math.Trunc(n) || n < 1 || n > 3 {
			return fmt.Errorf("clickCount=%v: pass 1, 2 or 3", n)
		}
		o.Count = int(n)
	}
	if c.args.Has("delay") {
		d := c.args.Number("delay", 0)
		if math.IsNaN(d) || d < 0 || d > maxClickDelay {
			return fmt.Errorf("delay=%v: pass milliseconds from 0 to %d", d, maxClickDelay)
		}
		o.Delay = time.Duration(d * float64(time.Millisecond))
	}
	opts := codegen.Object{"button": codegen.Omitted, "clickCount": codegen.Omitted, "delay": codegen.Omitted}
	for _, k := range []string{"button", "clickCount", "delay"} {
		if c.args.Has(k) {
			opts[k] = c.args.Raw(k)
		}
	}
	optsArg := codegen.FormatOptions(opts)
	if optsArg != "" {
		optsArg = ", " + optsArg
	}
	c.code("// Click mouse at coordinates (" + js(p[0]) + ", " + js(p[1]) + ")")
	c.code("await page.mouse.click(" + js(p[0]) + ", " + js(p[1]) + optsArg + ");")
	if err := c.tab.Act(c.ctx, c.tab.MouseClick(p[0], p[1], o)); err != nil {
		return err
	}
	c.resp.Result("Clicked at %g, %g", p[0], p[1])
	return nil
}

func mouseMove(c *tabCall) error {
	p, err := c.coords("x", "y")
	if err != nil {
		return err
	}
	c.code("// Move mouse to (" + js(p[0]) + ", " + js(p[1]) + ")")
	c.code("await page.mouse.move(" + js(p[0]) + ", " + js(p[1]) + ");")
	if err := c.tab.Act(c.ctx, c.tab.MouseMove(p[0], p[1])); err != nil {
		return err
	}
	c.resp.Result("Moved the mouse to %g, %g", p[0], p[1])
	return nil
}

func mouseButton(down bool) func(*tabCall) error {
	return func(c *tabCall) error {
		b := c.args.String("button", "left")
		step := c.tab.MouseUp(b)
		method := "up"
		if down {
			step = c.tab.MouseDown(b)
			method = "down"
		}
		opts := codegen.Object{"button": codegen.Omitted}
		if c.args.Has("button") {
			opts["button"] = b
		}
		c.code("// Press mouse " + method)
		c.code("await page.mouse." + method + "(" + codegen.FormatOptions(opts) + ");")
		if err := c.tab.Act(c.ctx, step); err != nil {
			return err
		}
		verb := "Released"
		if down {
			verb = "Pressed"
		}
		c.resp.Result("%s the %s mouse button", verb, b)
		return nil
	}
}

func mouseDrag(c *tabCall) error {
	p, err := c.coords("startX", "startY", "endX", "endY")
	if err != nil {
		return err
	}
	c.code("// Drag mouse from (" + js(p[0]) + ", " + js(p[1]) + ") to (" + js(p[2]) + ", " + js(p[3]) + ")")
	c.code("await page.mouse.move(" + js(p[0]) + ", " + js(p[1]) + ");")
	c.code("await page.mouse.down();")
	c.code("await page.mouse.move(" + js(p[2]) + ", " + js(p[3]) + ");")
	c.code("await page.mouse.up();")
	if err := c.tab.Act(c.ctx, c.tab.MouseDrag(p[0], p[1], p[2], p[3])); err != nil {
		return err
	}
	c.resp.Result("Dragged from %g, %g to %g, %g", p[0], p[1], p[2], p[3])
	return nil
}

func mouseWheel(c *tabCall) error {
	p, err := c.coords("deltaX", "deltaY")
	if err != nil {
		return err
	}
	c.code("// Scroll mouse wheel")
	c.code("await page.mouse.wheel(" + js(p[0]) + ", " + js(p[1]) + ");")
	if err := c.tab.Act(c.ctx, c.tab.MouseWheel(p[0], p[1])); err != nil {
		return err
	}
	c.resp.Result("Scrolled the mouse wheel by %g, %g", p[0], p[1])
	return nil
}
