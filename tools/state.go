package tools

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// stateTools are the seed's state family beyond upstream's core resize and
// emulate_media (--caps=emulation): a device, geolocation, timezone and
// locale for the current tab, and evaluate with a timeout that stops the
// script. Timezone, locale and device need context options in Playwright;
// here they go through the tab's CDP session instead, so the browser and
// its state stay.
func stateTools() []*Tool {
	act := tabOpts{snapshot: snapDiff}
	return []*Tool{
		{Def: optDef("browser_set_device", "Emulate a device", "Emulate one of Playwright's devices (e.g. \"iPhone 13\", \"Pixel 7\") in the current tab: viewport, device scale factor, mobile, touch and user agent. Reload the page for the server to see the new user agent.", false,
			props{"device": pStr("Device name from Playwright's device list; an empty string ends the emulation")}, "device"),
			Cap: "emulation", Handle: tabTool("browser_set_device", act, setDevice)},
		{Def: optDef("browser_set_geolocation", "Set geolocation", "Set the position the browser reports (and grant the geolocation permission); omit latitude and longitude to clear it.", false,
			props{
				"latitude":  map[string]any{"type": "number", "minimum": -90, "maximum": 90, "description": "Latitude between -90 and 90"},
				"longitude": map[string]any{"type": "number", "minimum": -180, "maximum": 180, "description": "Longitude between -180 and 180"},
				"accuracy":  map[string]any{"type": "number", "minimum": 0, "description": "Accuracy in meters (default 0)"},
			}),
			Cap: "emulation", Handle: tabTool("browser_set_geolocation", tabOpts{noPage: true}, setGeolocation)},
		{Def: optDef("browser_set_timezone", "Set timezone", "Override the current tab's timezone (an IANA name like \"Asia/Tokyo\"); an empty string restores the system timezone.", false,
			props{"timezoneId": pStr("IANA timezone, e.g. Europe/Berlin")}, "timezoneId"),
			Cap: "emulation", Handle: tabTool("browser_set_timezone", act, setTimezone)},
		{Def: optDef("browser_set_locale", "Set locale", "Override the current tab's locale (navigator.language, Intl, Accept-Language), e.g. \"de-DE\"; an empty string restores the default.", false,
			props{"locale": pStr("BCP 47 locale, e.g. fr-FR")}, "locale"),
			Cap: "emulation", Handle: tabTool("browser_set_locale", act, setLocale)},
		{Def: optDef("browser_evaluate_with_timeout", "Evaluate JavaScript with a timeout", "Evaluate a JavaScript expression on the page or an element, stopping it if it runs longer than the timeout (the page stays usable).", false,
			props{
				"element":  elementProp,
				"target":   targetProp,
				"function": pStr("() => { /* code */ } or (element) => { /* code */ } when element is provided"),
				"timeout":  map[string]any{"type": "number", "minimum": 0.1, "maximum": 120, "description": "Seconds the function may run, 0.1 to 120"},
			}, "function", "timeout"),
			Cap: "emulation", Aliases: refAlias, Handle: tabTool("browser_evaluate_with_timeout", act, evaluateWithTimeout)},
	}
}

func deviceNames(devices map[string]page.Device, query string) []string {
	q := strings.ToLower(query)
	var names []string
	for n := range devices {
		if q == "" || strings.Contains(strings.ToLower(n), q) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

func setDevice(c *tabCall) error {
	name := strings.TrimSpace(c.args.String("device", ""))
	if name == "" {
		return clearDevice(c)
	}
	devices, err := c.sess.Devices(c.ctx)
	if err != nil {
		return fmt.Errorf("read Playwright's device list: %w", err)
	}
	d, ok := devices[name]
	if !ok {
		for n, dd := range devices {
			if strings.EqualFold(n, name) {
				d, name, ok = dd, n, true
			}
		}
	}
	if !ok {
		first := strings.Fields(name)
		q := name
		if len(first) > 0 {
			q = first[0]
		}
		like := deviceNames(devices, q)
		if len(like) > 12 {
			like = like[:12]
		}
		if len(like) == 0 {
			like = deviceNames(devices, "pixel")
		}
		return fmt.Errorf("unknown device %s; Playwright knows %d devices, e.g. %s", clip.Quote(name), len(devices), strings.Join(like, ", "))
	}
	if d.Viewport == nil {
		return fmt.Errorf("device %q has no viewport", name)
	}
	if err := c.tab.EmulateDevice(c.ctx, d); err != nil {
		return err
	}
	c.resp.Result("Emulating %s: %dx%d, scale %g, mobile %v, touch %v", name, d.Viewport.Width, d.Viewport.Height, d.DeviceScaleFactor, d.IsMobile, d.HasTouch)
	return nil
}

// clearDevice ends a device emulation: the browser's metrics, touch and
// user agent, and the viewport the tab had before.
func clearDevice(c *tabCall) error {
	emulated, err := c.tab.ClearDevice(c.ctx)
	if err != nil {
		return err
	}
	if !emulated {
		c.resp.Result("No device is emulated")
		return nil
	}
	c.resp.Result("Device emulation ended")
	return nil
}

func setGeolocation(c *tabCall) error {
	hasLat, hasLon := c.args.Has("latitude"), c.args.Has("longitude")
	if hasLat != hasLon {
		return fmt.Errorf("pass both latitude and longitude, or neither to clear the position")
	}
	if !hasLat {
		if err := c.gen.SetGeolocation(c.ctx, nil); err != nil {
			return fmt.Errorf("clear geolocation: %w", err)
		}
		c.resp.Result("Cleared the geolocation")
		return nil
	}
	geo := &page.Geolocation{Latitude: c.args.Number("latitude", 0), Longitude: c.args.Number("longitude", 0)}
	if c.args.Has("accuracy") {
		a := c.args.Number("accuracy", 0)
		geo.Accuracy = &a
	}
	if err := c.gen.GrantPermissions(c.ctx, []string{"geolocation"}); err != nil {
		return fmt.Errorf("grant geolocation: %w", err)
	}
	if err := c.gen.SetGeolocation(c.ctx, geo); err != nil {
		return fmt.Errorf("set geolocation: %w", err)
	}
	c.resp.Result("Geolocation set to %g, %g", geo.Latitude, geo.Longitude)
	return nil
}

func setTimezone(c *tabCall) error {
	tz := strings.TrimSpace(c.args.String("timezoneId", ""))
	if err := c.tab.SetTimezone(c.ctx, tz); err != nil {
		if errors.Is(err, page.ErrUnknownTimezone) {
			return fmt.Errorf("timezone %s is unknown: use an IANA name like Europe/Berlin", clip.Quote(tz))
		}
		if tz != "" && !errors.Is(err, session.ErrBrowserGone) {
			return fmt.Errorf("timezone %s: %w (use an IANA name like Europe/Berlin)", clip.Quote(tz), err)
		}
		return err
	}
	if tz == "" {
		c.resp.Result("Timezone override cleared")
	} else {
		c.resp.Result("Timezone set to %s", tz)
	}
	return nil
}

func setLocale(c *tabCall) error {
	loc := strings.TrimSpace(c.args.String("locale", ""))
	if strings.ContainsAny(loc, ",;\r\n") {
		return fmt.Errorf("locale %s: pass one BCP 47 tag like de-DE", clip.Quote(loc))
	}
	if err := c.tab.SetLocale(c.ctx, loc); err != nil {
		return err
	}
	if loc == "" {
		c.resp.Result("Locale override cleared")
	} else {
		c.resp.Result("Locale set to %s (reload the page for the server to see Accept-Language)", loc)
	}
	return nil
}

// stopWait bounds the wait for the page to answer again after a runaway
// script was stopped.
const stopWait = 5 * time.Second

// ranOutOfTime reports whether err, the answer to a call bounded by ctx,
// means the function did not finish in time: ctx's deadline, or a timeout
// of the call itself. The call's timeout is ctx's plus a grace, so on a
// loaded machine the driver's own timeout can answer before this process
// ran the timer that ends ctx (ctx.Err() still nil): that is ours too.
func ranOutOfTime(ctx context.Context, err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, new(*page.TimeoutError)) ||
		err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)
}

func evaluateWithTimeout(c *tabCall) error {
	fn, el, err := c.evalArgs()
	if err != nil {
		return err
	}
	// Open the CDP session now: it is what stops a runaway script, and
	// opening it needs no answer from the busy page then.
	if err := c.tab.OpenCDP(c.ctx); err != nil {
		return err
	}
	timeout := seconds(c.args.Number("timeout", 5))
	nav, seq := c.tab.LastNavSeq(), c.tab.Seq()
	ectx, cancel := context.WithTimeout(c.ctx, timeout)
	defer cancel()
	var v any
	if el != nil {
		v, err = el.Evaluate(ectx, fn, nil)
	} else {
		v, err = c.tab.Evaluate(ectx, fn)
	}
	switch {
	case errors.Is(err, page.ErrModal):
		c.resp.Result("The script opened a dialog; handle it with browser_handle_dialog")
		return nil
	case err != nil && c.ctx.Err() != nil:
		return c.ctx.Err()
	case ranOutOfTime(ectx, err):
		// Stop the script where it is; the page lives on.
		_, terr := c.tab.CDP(c.ctx, "Runtime.terminateExecution", nil)
		// Wait, bounded, until the page answers again.
		wctx, wcancel := context.WithTimeout(c.ctx, stopWait)
		_, _ = c.tab.Read(wctx, "() => 0")
		wcancel()
		if terr != nil {
			return fmt.Errorf("the function did not finish within %v and could not be stopped: %w", timeout, terr)
		}
		return fmt.Errorf("the function did not finish within %v; it was stopped", timeout)
	case err != nil:
		return fmt.Errorf("evaluate: %w", err)
	}
	if err := c.evalResult(v); err != nil {
		return err
	}
	c.tab.Settle(c.ctx, nav, seq)
	return nil
}
