package tools

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"
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

const keyEmulation = "tools.emulation"

// emulation is what this server overrides on a tab through CDP; the
// overrides live as long as the tab's CDP session (the tab).
type emulation struct {
	mu        sync.Mutex
	userAgent string           // device override; "" = the browser's
	viewport  *playwright.Size // before the device, to restore
	locale    string
}

var emulationMu sync.Mutex

func (c *tabCall) emulation() *emulation {
	emulationMu.Lock()
	defer emulationMu.Unlock()
	e, _ := c.tab.Value(keyEmulation).(*emulation)
	if e == nil {
		e = &emulation{}
		c.tab.SetValue(keyEmulation, e)
	}
	return e
}

func (c *tabCall) cdp(method string, params map[string]any) (any, error) {
	s, err := c.cdpSession()
	if err != nil {
		return nil, err
	}
	res, err := s.Send(method, params)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", method, friendlyError(err))
	}
	return res, nil
}

// applyUserAgent sets the user agent and Accept-Language from the device and
// locale overrides together (CDP has one call for both).
func (c *tabCall) applyUserAgent(e *emulation) error {
	ua := e.userAgent
	if ua == "" {
		// No device: keep the user agent the page has.
		v, err := c.tab.Page.Evaluate("() => navigator.userAgent")
		if err != nil {
			return fmt.Errorf("read the user agent: %s", friendlyError(err))
		}
		ua, _ = v.(string)
	}
	params := map[string]any{"userAgent": ua}
	if e.locale != "" {
		params["acceptLanguage"] = e.locale
	}
	_, err := c.cdp("Emulation.setUserAgentOverride", params)
	return err
}

func deviceNames(devices map[string]*playwright.DeviceDescriptor, query string) []string {
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
		return fmt.Errorf("read Playwright's device list: %v", err)
	}
	d := devices[name]
	if d == nil {
		for n, dd := range devices {
			if strings.EqualFold(n, name) {
				d, name = dd, n
			}
		}
	}
	if d == nil {
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
		return fmt.Errorf("unknown device %q; Playwright knows %d devices, e.g. %s", name, len(devices), strings.Join(like, ", "))
	}
	if d.Viewport == nil {
		return fmt.Errorf("device %q has no viewport", name)
	}
	w, h := d.Viewport.Width, d.Viewport.Height
	e := c.emulation()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.userAgent == "" {
		if vp := c.tab.Page.ViewportSize(); vp != nil {
			saved := *vp
			e.viewport = &saved
		}
	}
	// Playwright's own viewport first (screenshots use it), then the
	// device's scale factor and mobile flag on top.
	if err := c.tab.Page.SetViewportSize(w, h); err != nil {
		return err
	}
	metrics := map[string]any{"width": w, "height": h, "deviceScaleFactor": d.DeviceScaleFactor, "mobile": d.IsMobile}
	if d.Screen != nil {
		metrics["screenWidth"], metrics["screenHeight"] = d.Screen.Width, d.Screen.Height
	}
	if _, err := c.cdp("Emulation.setDeviceMetricsOverride", metrics); err != nil {
		return err
	}
	if _, err := c.cdp("Emulation.setTouchEmulationEnabled", map[string]any{"enabled": d.HasTouch, "maxTouchPoints": 5}); err != nil {
		return err
	}
	e.userAgent = d.UserAgent
	if err := c.applyUserAgent(e); err != nil {
		return err
	}
	c.resp.Result("Emulating %s: %dx%d, scale %g, mobile %v, touch %v", name, w, h, d.DeviceScaleFactor, d.IsMobile, d.HasTouch)
	return nil
}

// clearDevice ends a device emulation: the browser's metrics, touch and
// user agent, and the viewport the tab had before.
func clearDevice(c *tabCall) error {
	e := c.emulation()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.userAgent == "" {
		c.resp.Result("No device is emulated")
		return nil
	}
	if _, err := c.cdp("Emulation.clearDeviceMetricsOverride", map[string]any{}); err != nil {
		return err
	}
	if _, err := c.cdp("Emulation.setTouchEmulationEnabled", map[string]any{"enabled": false}); err != nil {
		return err
	}
	if vp := e.viewport; vp != nil {
		if err := c.tab.Page.SetViewportSize(vp.Width, vp.Height); err != nil {
			return err
		}
	}
	e.userAgent, e.viewport = "", nil
	// An empty user agent ends the override; a locale keeps its own.
	if _, err := c.cdp("Emulation.setUserAgentOverride", map[string]any{"userAgent": ""}); err != nil {
		return err
	}
	if e.locale != "" {
		if err := c.applyUserAgent(e); err != nil {
			return err
		}
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
		if err := c.gen.Context.SetGeolocation(nil); err != nil {
			return fmt.Errorf("clear geolocation: %s", friendlyError(err))
		}
		c.resp.Result("Cleared the geolocation")
		return nil
	}
	geo := &playwright.Geolocation{Latitude: c.args.Number("latitude", 0), Longitude: c.args.Number("longitude", 0)}
	if c.args.Has("accuracy") {
		a := c.args.Number("accuracy", 0)
		geo.Accuracy = &a
	}
	if err := c.gen.Context.GrantPermissions([]string{"geolocation"}); err != nil {
		return fmt.Errorf("grant geolocation: %s", friendlyError(err))
	}
	if err := c.gen.Context.SetGeolocation(geo); err != nil {
		return fmt.Errorf("set geolocation: %s", friendlyError(err))
	}
	c.resp.Result("Geolocation set to %g, %g", geo.Latitude, geo.Longitude)
	return nil
}

func setTimezone(c *tabCall) error {
	tz := strings.TrimSpace(c.args.String("timezoneId", ""))
	if tz != "" {
		// Chromium takes unknown names without a word; its ICU knows better.
		ok, err := c.tab.Page.Evaluate(`tz => { try { Intl.DateTimeFormat(undefined, { timeZone: tz }); return true } catch { return false } }`, tz)
		if err == nil && ok == false {
			return fmt.Errorf("timezone %q is unknown: use an IANA name like Europe/Berlin", tz)
		}
	}
	if _, err := c.cdp("Emulation.setTimezoneOverride", map[string]any{"timezoneId": tz}); err != nil {
		if tz != "" {
			return fmt.Errorf("timezone %q: %v (use an IANA name like Europe/Berlin)", tz, err)
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
		return fmt.Errorf("locale %q: pass one BCP 47 tag like de-DE", loc)
	}
	if _, err := c.cdp("Emulation.setLocaleOverride", map[string]any{"locale": loc}); err != nil {
		return fmt.Errorf("locale %q: %v", loc, err)
	}
	e := c.emulation()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.locale = loc
	if err := c.applyUserAgent(e); err != nil {
		return err
	}
	if loc == "" {
		c.resp.Result("Locale override cleared")
	} else {
		c.resp.Result("Locale set to %s (reload the page for the server to see Accept-Language)", loc)
	}
	return nil
}

func evaluateWithTimeout(c *tabCall) error {
	fn, loc, err := c.evalArgs()
	if err != nil {
		return err
	}
	// Open the CDP session now: it is what stops a runaway script.
	if _, err := c.cdpSession(); err != nil {
		return err
	}
	timeout := seconds(c.args.Number("timeout", 5))
	nav, seq := c.tab.LastNavSeq(), c.tab.Seq()
	ch := c.evaluateAsync(loc, fn)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var r evalResult
	select {
	case r = <-ch:
	case <-c.tab.ModalOpened():
		c.resp.Result("The script opened a dialog; handle it with browser_handle_dialog")
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	case <-timer.C:
		select {
		case r = <-ch: // finished just now
		default:
			// Stop the script where it is; the page lives on.
			_, terr := c.cdp("Runtime.terminateExecution", map[string]any{})
			select {
			case <-ch:
			case <-time.After(5 * time.Second):
			}
			if terr != nil {
				return fmt.Errorf("the function did not finish within %v and could not be stopped: %v", timeout, terr)
			}
			return fmt.Errorf("the function did not finish within %v; it was stopped", timeout)
		}
	}
	if r.err != nil {
		return fmt.Errorf("evaluate: %s", friendlyError(r.err))
	}
	b, err := json.MarshalIndent(r.v, "", "  ")
	if err != nil {
		b = []byte(fmt.Sprint(r.v))
	}
	c.resp.ResultText(string(b))
	c.settle(nav, seq)
	return nil
}
