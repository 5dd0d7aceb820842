package tools

import (
	"fmt"

	"github.com/mxschmitt/playwright-go"
)

func emulateTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_emulate_media"), Cap: "core", Handle: tabTool("browser_emulate_media", tabOpts{snapshot: snapDiff}, emulateMedia)},
		{Def: upstreamDef("browser_resize"), Cap: "core", Handle: tabTool("browser_resize", tabOpts{snapshot: snapDiff}, resize)},
	}
}

func emulateMedia(c *tabCall) error {
	var o playwright.PageEmulateMediaOptions
	set := 0
	// Omitted: unchanged; null: clear the override.
	pick := func(key string, values map[string]any, clear any) any {
		if _, ok := c.args.m[key]; !ok {
			return nil
		}
		set++
		if v := c.args.Raw(key); v != nil {
			return values[v.(string)]
		}
		return clear
	}
	if v := pick("colorScheme", map[string]any{"light": playwright.ColorSchemeLight, "dark": playwright.ColorSchemeDark}, playwright.ColorSchemeNoOverride); v != nil {
		o.ColorScheme = v.(*playwright.ColorScheme)
	}
	if v := pick("reducedMotion", map[string]any{"reduce": playwright.ReducedMotionReduce, "no-preference": playwright.ReducedMotionNoPreference}, playwright.ReducedMotionNoOverride); v != nil {
		o.ReducedMotion = v.(*playwright.ReducedMotion)
	}
	if v := pick("forcedColors", map[string]any{"active": playwright.ForcedColorsActive, "none": playwright.ForcedColorsNone}, playwright.ForcedColorsNoOverride); v != nil {
		o.ForcedColors = v.(*playwright.ForcedColors)
	}
	if v := pick("contrast", map[string]any{"more": playwright.ContrastMore, "no-preference": playwright.ContrastNoPreference}, playwright.ContrastNoOverride); v != nil {
		o.Contrast = v.(*playwright.Contrast)
	}
	if v := pick("media", map[string]any{"screen": playwright.MediaScreen, "print": playwright.MediaPrint}, playwright.MediaNoOverride); v != nil {
		o.Media = v.(*playwright.Media)
	}
	if set == 0 {
		return fmt.Errorf("pass at least one of colorScheme, reducedMotion, forcedColors, contrast, media")
	}
	if err := c.tab.Page.EmulateMedia(o); err != nil {
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
	if err := c.tab.Page.SetViewportSize(int(w), int(h)); err != nil {
		return err
	}
	c.resp.Result("Resized the viewport to %dx%d", int(w), int(h))
	return nil
}
