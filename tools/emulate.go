package tools

import (
	"fmt"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

func emulateTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_emulate_media"), Cap: "core", Handle: tabTool("browser_emulate_media", tabOpts{snapshot: snapDiff}, emulateMedia)},
		{Def: upstreamDef("browser_resize"), Cap: "core", Handle: tabTool("browser_resize", tabOpts{snapshot: snapDiff}, resize)},
	}
}

func emulateMedia(c *tabCall) error {
	var o page.MediaOptions
	set := 0
	// Omitted: unchanged; null: clear the override ("" for session); a
	// value outside the list: unchanged.
	pick := func(key string, values ...string) *string {
		if _, ok := c.args.m[key]; !ok {
			return nil
		}
		set++
		v := c.args.Raw(key)
		if v == nil {
			none := ""
			return &none
		}
		s, _ := v.(string)
		for _, allowed := range values {
			if s == allowed {
				return &s
			}
		}
		return nil
	}
	o.ColorScheme = pick("colorScheme", "light", "dark")
	o.ReducedMotion = pick("reducedMotion", "reduce", "no-preference")
	o.ForcedColors = pick("forcedColors", "active", "none")
	o.Contrast = pick("contrast", "more", "no-preference")
	o.Media = pick("media", "screen", "print")
	if set == 0 {
		return fmt.Errorf("pass at least one of colorScheme, reducedMotion, forcedColors, contrast, media")
	}
	given := codegen.Object{}
	for _, k := range []string{"colorScheme", "reducedMotion", "forcedColors", "contrast", "media"} {
		if v, ok := c.args.m[k]; ok {
			given[k] = v
		}
	}
	c.code("await page.emulateMedia(" + codegen.FormatObject(given, true) + ");")
	if err := c.tab.EmulateMedia(c.ctx, o); err != nil {
		return err
	}
	c.resp.Result("Media emulation updated")
	return nil
}

func resize(c *tabCall) error {
	w, h := c.args.Number("width", 0), c.args.Number("height", 0)
	if w < 1 || h < 1 || w > 16384 || h > 16384 {
		return fmt.Errorf("width and height must be between 1 and 16384, got %vx%v", w, h)
	}
	c.code("await page.setViewportSize({ width: " + js(w) + ", height: " + js(h) + " });")
	if err := c.tab.SetViewportSize(c.ctx, int(w), int(h)); err != nil {
		return err
	}
	c.resp.Result("Resized the viewport to %dx%d", int(w), int(h))
	return nil
}
