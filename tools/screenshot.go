package tools

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mxschmitt/playwright-go"
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
	st := map[string]*playwright.ScreenshotType{"png": playwright.ScreenshotTypePng, "jpeg": playwright.ScreenshotTypeJpeg, "webp": playwright.ScreenshotTypeWebp}[typ]
	scale := playwright.ScreenshotScaleCss
	if c.args.String("scale", "css") == "device" {
		scale = playwright.ScreenshotScaleDevice
	}
	full := c.args.Bool("fullPage", false)
	target := c.args.String("target", "")
	if full && target != "" {
		return fmt.Errorf("fullPage cannot be used with an element screenshot")
	}
	var quality *int
	if typ != "png" {
		quality = playwright.Int(90)
	}
	var data []byte
	var err error
	what := "viewport"
	if target != "" {
		loc, lerr := c.locate(target)
		if lerr != nil {
			return lerr
		}
		what = c.describe(target)
		data, err = loc.Screenshot(playwright.LocatorScreenshotOptions{Type: st, Scale: scale, Quality: quality})
	} else {
		if full {
			what = "full page"
		}
		data, err = c.tab.Page.Screenshot(playwright.PageScreenshotOptions{Type: st, Scale: scale, FullPage: playwright.Bool(full), Quality: quality})
	}
	if err != nil {
		return fmt.Errorf("screenshot: %s", friendlyError(err))
	}
	p, err := c.env.writeOutput(name, "page", "."+typ, data)
	if err != nil {
		return err
	}
	c.resp.Result("- [Screenshot of %s](%s)", what, relLink(p))
	if name == "" {
		c.resp.AddImage(base64.StdEncoding.EncodeToString(data), "image/"+typ)
	}
	return nil
}
