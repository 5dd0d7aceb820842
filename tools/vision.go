package tools

import (
	"fmt"
	"math"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// visionTools are upstream's --caps=vision coordinate tools (viewport CSS
// pixels, as in a screenshot at scale css), plus the labelled screenshot
// (labels.go).
func visionTools() []*Tool {
	act := tabOpts{snapshot: snapDiff}
	button := pEnum("Button to press, defaults to left", "left", "right", "middle")
	xy := func(what string) props {
		return props{"x": pNum(what + "X coordinate"), "y": pNum(what + "Y coordinate")}
	}
	click := xy("")
	click["button"] = pEnum("Button to click, defaults to left", "left", "right", "middle")
	click["clickCount"] = map[string]any{"type": "integer", "minimum": 1, "maximum": 3, "description": "Number of clicks, defaults to 1"}
	click["delay"] = map[string]any{"type": "number", "minimum": 0, "maximum": 5000, "description": "Time to wait between mouse down and mouse up in milliseconds, defaults to 0"}
	t := func(name, title, desc string, p props, fn func(*tabCall) error, required ...string) *Tool {
		return &Tool{Def: optDef(name, title, desc, false, p, required...), Cap: "vision", Handle: tabTool(name, act, fn)}
	}
	return []*Tool{
		t("browser_mouse_click_xy", "Click", "Click mouse button at a given position", click, mouseClick, "x", "y"),
		t("browser_mouse_move_xy", "Move mouse", "Move mouse to a given position", xy(""), mouseMove, "x", "y"),
		t("browser_mouse_down", "Press mouse down", "Press mouse down", props{"button": button}, mouseButton(true)),
		t("browser_mouse_up", "Press mouse up", "Press mouse up", props{"button": button}, mouseButton(false)),
		t("browser_mouse_drag_xy", "Drag mouse", "Drag left mouse button to a given position", props{
			"startX": pNum("Start X coordinate"), "startY": pNum("Start Y coordinate"),
			"endX": pNum("End X coordinate"), "endY": pNum("End Y coordinate"),
		}, mouseDrag, "startX", "startY", "endX", "endY"),
		t("browser_mouse_wheel", "Scroll mouse wheel", "Scroll mouse wheel", props{"deltaX": pNum("X delta"), "deltaY": pNum("Y delta")}, mouseWheel, "deltaX", "deltaY"),
	}
}

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
		o.Count = int(c.args.Number("clickCount", 1))
	}
	if c.args.Has("delay") {
		o.Delay = time.Duration(c.args.Number("delay", 0) * float64(time.Millisecond))
	}
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
		if down {
			step = c.tab.MouseDown(b)
		}
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
	if err := c.tab.Act(c.ctx, c.tab.MouseWheel(p[0], p[1])); err != nil {
		return err
	}
	c.resp.Result("Scrolled the mouse wheel by %g, %g", p[0], p[1])
	return nil
}
