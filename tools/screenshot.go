package tools

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

func screenshotTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_take_screenshot"), Cap: "core", Aliases: refAlias, Handle: tabTool("browser_take_screenshot", tabOpts{noPage: true}, screenshot)},
	}
}

func screenshot(c *tabCall) error {
	name := c.args.String("filename", "")
	typ := c.args.String("type", "")
	if typ == "" {
		switch strings.ToLower(filepath.Ext(name)) {
		case ".jpg", ".jpeg":
			typ = "jpeg"
		case ".webp":
			typ = "webp"
		default:
			typ = "png"
		}
	}
	o := page.ScreenshotOptions{Type: typ, DeviceScale: c.args.String("scale", "css") == "device"}
	full := c.args.Bool("fullPage", false)
	target := c.args.String("target", "")
	if full && target != "" {
		return fmt.Errorf("fullPage cannot be used with an element screenshot")
	}
	if typ != "png" {
		o.Quality = 90
	}
	var data []byte
	var err error
	what := "viewport"
	codeOn := "page"
	if target != "" {
		el, lerr := c.locate(target)
		if lerr != nil {
			return lerr
		}
		what = c.describe(target)
		codeOn = c.tsLocator(el, target)
		data, err = el.Screenshot(c.ctx, o)
	} else {
		if full {
			what = "full page"
		}
		o.FullPage = full
		data, err = c.tab.Screenshot(c.ctx, o)
	}
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	p, err := c.writeOutput(name, "page", "."+typ, data)
	if err != nil {
		return err
	}
	// As upstream: the label is the agent's element description, the
	// options those of the call, the path the file's.
	label := map[bool]string{true: "full page", false: "viewport"}[full]
	if target != "" {
		label = c.args.String("element", "")
		if label == "" {
			label = "element"
		}
	}
	opts := codegen.Object{"type": typ, "scale": c.args.String("scale", "css"), "path": c.env.link(p), "quality": codegen.Omitted, "fullPage": codegen.Omitted}
	if o.Quality > 0 {
		opts["quality"] = o.Quality
	}
	if c.args.Has("fullPage") {
		opts["fullPage"] = full
	}
	c.code("// Screenshot " + label + " and save it as " + c.env.link(p))
	c.code("await " + codeOn + ".screenshot(" + codegen.FormatObject(opts, false) + ");")
	c.resp.Result("- [Screenshot of %s](%s)", what, c.env.link(p))
	if name == "" {
		units := "CSS px"
		if o.DeviceScale {
			units = "device px"
		}
		of := map[string]string{"viewport": " of the viewport", "full page": " of the full page"}[what]
		if of == "" {
			of = " of the element"
		}
		c.addImage(data, typ, units+of)
	}
	return nil
}
