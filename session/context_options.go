package session

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// ContextOptions are applied to every browser context a session gets: at
// launch (a persistent or a new context) or, for a browser reached over
// CDP, where a running context allows it. Zero values keep Playwright's
// defaults.
type ContextOptions struct {
	// Device is a Playwright device descriptor name ("iPhone 15"): its
	// viewport, user agent, scale, mobile and touch. "" emulates nothing.
	// UserAgent and Viewport win over the device's.
	Device string
	// UserAgent overrides the browser's user agent.
	UserAgent string
	// Permissions are granted to every origin.
	Permissions []string
	// IgnoreHTTPSErrors accepts invalid certificates.
	IgnoreHTTPSErrors bool
	// BlockServiceWorkers stops pages registering service workers.
	BlockServiceWorkers bool
	// Proxy routes the browser's traffic; nil for none.
	Proxy *Proxy
	// StorageState is a storage-state JSON file loaded into each new
	// context; "" for none.
	StorageState string
	// InitScripts are JavaScript sources run in every page before its own
	// scripts.
	InitScripts []string
	// TestIDAttribute is the attribute getByTestId matches. If empty,
	// data-testid.
	TestIDAttribute string
	// AllowedOrigins and BlockedOrigins filter what the browser requests
	// (see origins.go). Not a security boundary.
	AllowedOrigins, BlockedOrigins []string

	Locale, TimezoneID, ColorScheme, ReducedMotion string
	DeviceScaleFactor                              float64
	IsMobile, HasTouch, JavaScriptEnabled          *bool
	BypassCSP, Offline                             bool
	Geolocation                                    *page.Geolocation
	ExtraHTTPHeaders                               map[string]string
	// HTTPUsername and HTTPPassword answer HTTP authentication.
	HTTPUsername, HTTPPassword string
}

// Proxy is a proxy server. Credentials in Server's URL are moved to
// Username and Password (HTTP) or kept inline (SOCKS, which Playwright
// cannot authenticate but CloakBrowser's Chromium can).
type Proxy struct {
	Server, Bypass     string
	Username, Password string
}

// LaunchOptions are the browser process options beyond Config's.
type LaunchOptions struct {
	// Channel is a Chrome/Edge channel ("chrome", "msedge", …) to run
	// instead of the resolved binary; "" runs the resolved binary.
	Channel string
	// Env is added to the browser's environment.
	Env map[string]string
	// SlowMo delays every Playwright operation.
	SlowMo time.Duration
	// IgnoreDefaultArgs are more Playwright default arguments to drop.
	IgnoreDefaultArgs []string
}

// proxyArgs returns the browser arguments and the Playwright proxy for p:
// SOCKS with credentials goes inline on the command line (Playwright
// refuses SOCKS authentication; CloakBrowser's Chromium takes it inline, as
// the bridge does), everything else through Playwright's proxy option.
func (p *Proxy) split() (args []string, pw *playwright.Proxy) {
	if p == nil || p.Server == "" {
		return nil, nil
	}
	server, user, pass := p.Server, p.Username, p.Password
	if u, err := url.Parse(server); err == nil && u.User != nil {
		if user == "" {
			user = u.User.Username()
			pass, _ = u.User.Password()
		}
		if strings.HasPrefix(u.Scheme, "socks") {
			args = []string{"--proxy-server=" + server}
			if p.Bypass != "" {
				args = append(args, "--proxy-bypass-list="+strings.ReplaceAll(p.Bypass, ",", ";"))
			}
			return args, nil
		}
		u.User = nil
		server = u.String()
	}
	pw = &playwright.Proxy{Server: server}
	if p.Bypass != "" {
		pw.Bypass = playwright.String(p.Bypass)
	}
	if user != "" {
		pw.Username = playwright.String(user)
		pw.Password = playwright.String(pass)
	}
	return nil, pw
}

// contextJSON is the options as Playwright's context-option JSON, the shape
// BrowserNewContextOptions and BrowserTypeLaunchPersistentContextOptions
// share. device is the resolved descriptor, or nil; window says the page
// takes the browser window's size (no viewport emulation); headfulUA, if
// set, is the user agent when neither the user nor the device gives one;
// launchTZ says the time zone is set at launch instead.
func (o ContextOptions) contextJSON(device *playwright.DeviceDescriptor, viewport *page.Size, window bool, headfulUA string, launchTZ bool) map[string]any {
	m := map[string]any{}
	if window && device == nil && viewport == nil {
		m["noViewport"] = true
	}
	if headfulUA != "" && device == nil {
		m["userAgent"] = headfulUA
	}
	if device != nil {
		m["userAgent"] = device.UserAgent
		if device.Viewport != nil {
			m["viewport"] = device.Viewport
		}
		if device.Screen != nil {
			m["screen"] = device.Screen
		}
		m["deviceScaleFactor"] = device.DeviceScaleFactor
		m["isMobile"] = device.IsMobile
		m["hasTouch"] = device.HasTouch
	}
	if viewport != nil {
		m["viewport"] = map[string]int{"width": viewport.Width, "height": viewport.Height}
	}
	set := func(k string, v any, ok bool) {
		if ok {
			m[k] = v
		}
	}
	set("userAgent", o.UserAgent, o.UserAgent != "")
	set("permissions", o.Permissions, len(o.Permissions) > 0)
	set("ignoreHTTPSErrors", true, o.IgnoreHTTPSErrors)
	set("serviceWorkers", "block", o.BlockServiceWorkers)
	set("locale", o.Locale, o.Locale != "")
	set("timezoneId", o.TimezoneID, o.TimezoneID != "" && !launchTZ)
	set("colorScheme", o.ColorScheme, o.ColorScheme != "")
	set("reducedMotion", o.ReducedMotion, o.ReducedMotion != "")
	set("deviceScaleFactor", o.DeviceScaleFactor, o.DeviceScaleFactor > 0)
	set("isMobile", o.IsMobile, o.IsMobile != nil)
	set("hasTouch", o.HasTouch, o.HasTouch != nil)
	set("javaScriptEnabled", o.JavaScriptEnabled, o.JavaScriptEnabled != nil)
	set("bypassCSP", true, o.BypassCSP)
	set("offline", true, o.Offline)
	set("extraHTTPHeaders", o.ExtraHTTPHeaders, len(o.ExtraHTTPHeaders) > 0)
	if g := o.Geolocation; g != nil {
		m["geolocation"] = map[string]any{"latitude": g.Latitude, "longitude": g.Longitude, "accuracy": g.Accuracy}
	}
	if o.HTTPUsername != "" {
		m["httpCredentials"] = map[string]string{"username": o.HTTPUsername, "password": o.HTTPPassword}
	}
	return m
}

// fillOptions decodes m into a Playwright options struct (their JSON tags
// are Playwright's option names).
func fillOptions(m map[string]any, dst any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

// device resolves cfg.Context.Device from the driver's descriptors.
func (s *Session) device(pw *playwright.Playwright) (*playwright.DeviceDescriptor, error) {
	return lookupDevice(pw, s.cfg.Context.Device)
}

func lookupDevice(pw *playwright.Playwright, name string) (*playwright.DeviceDescriptor, error) {
	if name == "" {
		return nil, nil
	}
	if d := pw.Devices[name]; d != nil {
		return d, nil
	}
	return nil, fmt.Errorf("unknown device %q: use a Playwright device name such as \"iPhone 15\" or \"Pixel 7\"", name)
}

// persistentOptions adds the context options to a persistent launch of
// bin; ua is the headed user agent to send ("" keeps the browser's).
func (c Config) persistentOptions(pw *playwright.Playwright, opts *playwright.BrowserTypeLaunchPersistentContextOptions, bin cloakbrowser.BinaryInfo, ua string) error {
	dev, err := lookupDevice(pw, c.Context.Device)
	if err != nil {
		return err
	}
	if err := fillOptions(c.Context.contextJSON(dev, c.Viewport, true, ua, c.launchTimezone()), opts); err != nil {
		return err
	}
	args, proxy := c.Context.Proxy.split()
	opts.Args = append(opts.Args, args...)
	opts.Proxy = proxy
	if c.Launch.Channel != "" {
		opts.Channel = playwright.String(c.Launch.Channel)
		opts.ExecutablePath = nil
	}
	if len(c.Launch.Env) > 0 {
		opts.Env = c.Launch.Env
	}
	if c.launchTimezone() && bin.Engine != cloakbrowser.EngineCloak {
		// The process's own zone, as a desktop's: no override to notice.
		env := maps.Clone(opts.Env)
		if env == nil {
			env = map[string]string{}
		}
		env["TZ"] = c.Context.TimezoneID
		opts.Env = env
	}
	if c.Launch.SlowMo > 0 {
		opts.SlowMo = playwright.Float(float64(c.Launch.SlowMo.Milliseconds()))
	}
	opts.IgnoreDefaultArgs = append(opts.IgnoreDefaultArgs, c.Launch.IgnoreDefaultArgs...)
	return nil
}

// newContextOptions is the options of a context created in a browser (the
// shared one, or one reached with --endpoint). window says the browser is
// ours, its window sized by us (Config.Window); ua is the headed user agent
// to send ("" keeps the browser's).
func (c Config) newContextOptions(pw *playwright.Playwright, window bool, ua string) (playwright.BrowserNewContextOptions, error) {
	opts := playwright.BrowserNewContextOptions{AcceptDownloads: playwright.Bool(true)}
	dev, err := lookupDevice(pw, c.Context.Device)
	if err != nil {
		return opts, err
	}
	if err := fillOptions(c.Context.contextJSON(dev, c.Viewport, window, ua, false), &opts); err != nil {
		return opts, err
	}
	_, opts.Proxy = c.Context.Proxy.split()
	if c.Context.StorageState != "" {
		opts.StorageStatePath = playwright.String(c.Context.StorageState)
	}
	return opts, nil
}

// prepare applies what no launch option carries to a new generation's
// context: init scripts, the test id attribute, origin filtering and, when
// the context was not created with it, the storage state; for an attached
// browser also what can change on a running context.
func (g *Generation) prepare(ctx context.Context, pw *playwright.Playwright, loadState, attached bool) error {
	o := g.s.cfg.Context
	page.RegisterEngines(pw) // before the context's first locator (ARIA refs need it)
	if o.TestIDAttribute != "" && o.TestIDAttribute != "data-testid" {
		// Process-wide in Playwright; every session has the same setting.
		pw.Selectors.SetTestIdAttribute(o.TestIDAttribute)
	}
	for _, src := range o.InitScripts {
		src := src
		if err := page.Run(ctx, g.Context, "add an init script", func() error {
			return g.bc.AddInitScript(playwright.Script{Content: &src})
		}); err != nil {
			return err
		}
	}
	if attached {
		if len(o.Permissions) > 0 {
			if err := g.GrantPermissions(ctx, o.Permissions); err != nil {
				return err
			}
		}
		if len(o.ExtraHTTPHeaders) > 0 {
			if err := page.Run(ctx, g.Context, "set extra headers", func() error {
				return g.bc.SetExtraHTTPHeaders(o.ExtraHTTPHeaders)
			}); err != nil {
				return err
			}
		}
		if o.Geolocation != nil {
			if err := g.SetGeolocation(ctx, o.Geolocation); err != nil {
				return err
			}
		}
	}
	if err := g.filterOrigins(ctx); err != nil {
		return err
	}
	if loadState && o.StorageState != "" {
		b, err := os.ReadFile(o.StorageState)
		if err != nil {
			return fmt.Errorf("read the storage state %s: %w", o.StorageState, err)
		}
		if err := g.SetStorageState(ctx, b); err != nil {
			return fmt.Errorf("load the storage state %s: %w", o.StorageState, err)
		}
	}
	return nil
}

// CheckDevice reports whether the driver knows the device descriptor name,
// with an error that lists close names when it does not.
func CheckDevice(ctx context.Context, drv *driver.Driver, name string) error {
	pw, err := drv.Get(ctx)
	if err != nil {
		return err
	}
	if pw.Devices[name] != nil {
		return nil
	}
	var near []string
	first := strings.ToLower(strings.Fields(name + " x")[0])
	for n := range pw.Devices {
		if strings.HasPrefix(strings.ToLower(n), first) && !strings.Contains(n, "landscape") {
			near = append(near, n)
		}
	}
	sort.Strings(near)
	if len(near) > 8 {
		near = near[:8]
	}
	hint := `"iPhone 15", "Pixel 7", "Galaxy S9+", "iPad Mini"`
	if len(near) > 0 {
		hint = `"` + strings.Join(near, `", "`) + `"`
	}
	return fmt.Errorf("--device=%q: not a Playwright device; use one such as %s", name, hint)
}
