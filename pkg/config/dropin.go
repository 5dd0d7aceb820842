package config

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ContextOptions are Playwright BrowserContextOptions keys without a flag of
// their own, from the config file's browser.contextOptions or the bridge's
// CLOAK_PLAYWRIGHT_MCP_CONTEXT_OPTIONS. Zero values leave Playwright's
// defaults.
type ContextOptions struct {
	Locale            string            `json:"locale"`
	TimezoneID        string            `json:"timezoneId"`
	ColorScheme       string            `json:"colorScheme"`
	ReducedMotion     string            `json:"reducedMotion"`
	DeviceScaleFactor float64           `json:"deviceScaleFactor"`
	IsMobile          *bool             `json:"isMobile"`
	HasTouch          *bool             `json:"hasTouch"`
	JavaScriptEnabled *bool             `json:"javaScriptEnabled"`
	BypassCSP         bool              `json:"bypassCSP"`
	Offline           bool              `json:"offline"`
	Geolocation       *Geolocation      `json:"geolocation"`
	ExtraHTTPHeaders  map[string]string `json:"extraHTTPHeaders"`
	HTTPCredentials   *Credentials      `json:"httpCredentials"`
	// RecordVideo records a video of every page from its start, saved into
	// the output directory when the page's recording ends (the session
	// closes, the browser closes); nil records none.
	RecordVideo *RecordVideo `json:"recordVideo"`
}

// RecordVideo is browser.contextOptions.recordVideo.
type RecordVideo struct {
	// Dir is the directory of the videos, relative to the output directory
	// (the caller's own over HTTP with tokens), or an absolute path inside
	// it (anywhere with --allow-unrestricted-file-access). If empty, the
	// output directory itself.
	Dir string `json:"dir"`
	// Size is the videos' frame size. If nil, the page's viewport scaled
	// down to fit 800x800, as Playwright.
	Size *VideoSize `json:"size"`
	// FPS is the frame rate, 1 to 60; 0 for Playwright's 25.
	FPS int `json:"fps"`
	// ShowActions, if set, annotates each action in the videos
	// (Playwright's showActions).
	ShowActions *VideoActions `json:"showActions"`
}

// VideoActions is recordVideo.showActions: Playwright's action
// annotations. Zero values are Playwright's (500 ms, top-right, 24 px, a
// pointer cursor, no point or highlight decoration).
type VideoActions struct {
	// Duration is how long each annotation shows, in milliseconds.
	Duration float64 `json:"duration"`
	// Position is top-left, top, top-right, bottom-left, bottom or
	// bottom-right.
	Position string `json:"position"`
	// FontSize is the title's font size in pixels.
	FontSize int `json:"fontSize"`
	// Cursor is "pointer" or "none".
	Cursor string `json:"cursor"`
	// Style holds CSS declarations of the decorations.
	Style *VideoActionStyle `json:"style"`
}

// VideoActionStyle is showActions.style: CSS declarations of the action
// point's marker, the target's box and the action title.
type VideoActionStyle struct {
	Point     string `json:"point"`
	Highlight string `json:"highlight"`
	Title     string `json:"title"`
}

// VideoSize is a video's frame size in pixels.
type VideoSize struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// Geolocation is a context's emulated position.
type Geolocation struct {
	Latitude  float64  `json:"latitude"`
	Longitude float64  `json:"longitude"`
	Accuracy  *float64 `json:"accuracy"`
}

// Credentials are HTTP authentication credentials.
type Credentials struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// LaunchOptions are Playwright LaunchOptions keys without a flag of their
// own, from the config file's browser.launchOptions.
type LaunchOptions struct {
	// Env is added to the browser's environment.
	Env map[string]string
	// SlowMo slows every Playwright operation down by this much.
	SlowMo time.Duration
	// Timeout bounds one launch. If zero, 60s.
	Timeout time.Duration
	// IgnoreDefaultArgs are more Playwright default arguments to drop.
	IgnoreDefaultArgs []string
	// ProxyUsername and ProxyPassword authenticate to ProxyServer.
	ProxyUsername, ProxyPassword string
}

// IdleAfter is how long the browser may stay idle before it is closed; 0
// means never.
func (c Config) IdleAfter() time.Duration {
	if c.IdleTimeout != nil {
		return *c.IdleTimeout
	}
	if c.Headless {
		return time.Hour
	}
	return 0
}

// MobileDevice is the descriptor --mobile emulates on Chromium, as upstream.
const MobileDevice = "Pixel 10"

// DeviceName is the device descriptor to emulate ("" for none).
func (c Config) DeviceName() string {
	if c.Mobile && c.Device == "" {
		return MobileDevice
	}
	return c.Device
}

// Attached reports whether sessions drive a browser someone else started.
func (c Config) Attached() bool { return c.CDPEndpoint != "" || c.Endpoint != "" }

// ReadInitScripts returns the contents of InitScripts, in order.
func (c Config) ReadInitScripts() ([]string, error) {
	out := make([]string, 0, len(c.InitScripts))
	for _, p := range c.InitScripts {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, &settingError{setting: "--init-script", value: quote(p), why: "cannot be read: " + shortErr(err), err: err}
		}
		out = append(out, string(b))
	}
	return out, nil
}

// quote shortens a value for an error message to at most 100 characters.
func quote(v string) string {
	if len(v) > 100 {
		v = v[:97] + "..."
	}
	return strconv.Quote(v)
}

func shortErr(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// ParseDotenv reads a dotenv file: NAME=value lines, # comments, optional
// "export ", single or double quotes (double quotes expand \n).
func ParseDotenv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		l = strings.TrimPrefix(l, "export ")
		k, v, ok := strings.Cut(l, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("line %d: want NAME=value", line)
		}
		v = strings.TrimSpace(v)
		switch {
		case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
			v = strings.ReplaceAll(v[1:len(v)-1], `\n`, "\n")
		case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
			v = v[1 : len(v)-1]
		default:
			if i := strings.Index(v, " #"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
		}
		out[k] = v
	}
	return out, sc.Err()
}

// parseHeader adds one "Name: value" to m, as upstream's headerParser.
func parseHeader(m map[string]string, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	name, val, _ := strings.Cut(v, ":")
	if name = strings.TrimSpace(name); name != "" {
		m[name] = strings.TrimSpace(val)
	}
	return m
}

func semicolonList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func enum(p func(c *Config) *string, allowed ...string) func(*Config, string) error {
	return func(c *Config, v string) error {
		v = strings.TrimSpace(v)
		for _, a := range allowed {
			if v == a {
				*p(c) = v
				return nil
			}
		}
		return &valueError{want: "must be one of " + strings.Join(allowed, ", ")}
	}
}

// appendTo appends one value or a CSV of values; multi flags reset the list
// the first time they are seen on the command line.
func appendTo(p func(c *Config) *[]string, csv bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		if !csv {
			if v = strings.TrimSpace(v); v != "" {
				*p(c) = append(*p(c), v)
			}
			return nil
		}
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				*p(c) = append(*p(c), s)
			}
		}
		return nil
	}
}

// dropinSettings are @playwright/mcp's and the bridge's options; their env
// names follow upstream's configFromEnv (playwright-core 1.64's coreBundle),
// including its exceptions (PLAYWRIGHT_MCP_SECRETS_FILE,
// PLAYWRIGHT_MCP_CDP_HEADERS, PLAYWRIGHT_MCP_WEBMCP).
var dropinSettings = []setting{
	{flags: []string{"codegen"}, env: envs("CODEGEN"), help: `language of "### Ran Playwright code": typescript (default), python, java, csharp, none`, set: enum(func(c *Config) *string { return &c.Codegen }, "typescript", "python", "java", "csharp", "none")},
	{flags: []string{"secrets"}, env: envs("SECRETS_FILE"), help: "dotenv file of secrets: typing a NAME types its value; values are redacted as <secret>NAME</secret>", set: func(c *Config, v string) error {
		m, err := ParseDotenv(v)
		if err != nil {
			return &valueError{want: "cannot read the dotenv file (" + shortErr(err) + "): give a readable NAME=value file", err: err}
		}
		c.SecretsFile, c.Secrets = v, m
		return nil
	}},
	{flags: []string{"image-responses"}, env: envs("IMAGE_RESPONSES"), help: "allow (default), omit or only", set: enum(func(c *Config) *string { return &c.ImageResponses }, "allow", "omit", "only")},
	{flags: []string{"snapshot-boxes"}, env: envs("SNAPSHOT_BOXES"), isBool: true, help: "add [box=x,y,width,height] to snapshot lines", set: boolean(func(c *Config) *bool { return &c.SnapshotBoxes })},
	{flags: []string{"no-webmcp"}, isBool: true, help: "do not collect or expose tools a page registers through WebMCP (overrides --caps webmcp)", set: boolean(func(c *Config) *bool { return &c.NoWebMCP })},
	{flags: []string{"webmcp"}, env: envs("WEBMCP"), isBool: true, help: "with --caps webmcp: collect and expose WebMCP tools (default true)", set: func(c *Config, v string) error {
		b, err := parseBool(v)
		c.NoWebMCP = !b
		return err
	}},
	{flags: []string{"console-level"}, env: envs("CONSOLE_LEVEL"), help: "least severe console message returned: error, warning, info (default), debug", set: enum(func(c *Config) *string { return &c.ConsoleLevel }, "error", "warning", "info", "debug")},
	{flags: []string{"timeout-settle"}, env: envs("TIMEOUT_SETTLE"), help: "ms to wait after each action for the requests it set off to end (default 2000; upstream 500)", set: millis(func(c *Config) *time.Duration { return &c.TimeoutSettle })},
	{flags: []string{"idle-timeout"}, env: envs("IDLE_TIMEOUT"), help: "close the browser after this many ms without a completed tool call; the next call relaunches it (default 3600000 headless, never headed; 0 disables)", set: func(c *Config, v string) error {
		var d time.Duration
		if err := millis(func(*Config) *time.Duration { return &d })(c, v); err != nil {
			return err
		}
		c.IdleTimeout = &d
		return nil
	}},
	{flags: []string{"browser"}, env: envs("BROWSER"), help: "chromium (default), chrome, msedge (and their -beta/-dev/-canary channels); firefox and webkit are refused", set: str(func(c *Config) *string { return &c.Browser })},
	{flags: []string{"device"}, env: envs("DEVICE"), help: `Playwright device to emulate, e.g. "iPhone 15"`, set: str(func(c *Config) *string { return &c.Device })},
	{flags: []string{"mobile"}, env: envs("MOBILE"), isBool: true, help: "emulate a generic mobile device (" + MobileDevice + "); not with --device", set: boolean(func(c *Config) *bool { return &c.Mobile })},
	{flags: []string{"user-agent"}, env: envs("USER_AGENT"), help: "user agent string", set: str(func(c *Config) *string { return &c.UserAgent })},
	{flags: []string{"grant-permissions"}, reset: func(c *Config) { c.GrantPermissions = nil }, env: envs("GRANT_PERMISSIONS"), multi: true, help: "permissions to grant, e.g. geolocation,clipboard-read", set: appendTo(func(c *Config) *[]string { return &c.GrantPermissions }, true)},
	{flags: []string{"ignore-https-errors"}, env: envs("IGNORE_HTTPS_ERRORS"), isBool: true, help: "ignore HTTPS certificate errors", set: boolean(func(c *Config) *bool { return &c.IgnoreHTTPSErrors })},
	{flags: []string{"proxy-server"}, env: envs("PROXY_SERVER"), help: `proxy, e.g. "http://myproxy:3128" or "socks5://myproxy:8080" (user:password@ allowed)`, set: str(func(c *Config) *string { return &c.ProxyServer })},
	{flags: []string{"proxy-bypass"}, env: envs("PROXY_BYPASS"), help: `comma-separated hosts not to proxy, e.g. ".com,chromium.org"`, set: str(func(c *Config) *string { return &c.ProxyBypass })},
	{flags: []string{"block-service-workers"}, env: envs("BLOCK_SERVICE_WORKERS"), isBool: true, help: "block service workers", set: boolean(func(c *Config) *bool { return &c.BlockServiceWorkers })},
	{flags: []string{"storage-state"}, env: envs("STORAGE_STATE"), help: "storage state JSON file loaded into every new context", set: str(func(c *Config) *string { return &c.StorageState })},
	{flags: []string{"init-script"}, reset: func(c *Config) { c.InitScripts = nil }, env: envs("INIT_SCRIPT"), multi: true, help: "JavaScript file run in every page before its scripts (repeatable)", set: appendTo(func(c *Config) *[]string { return &c.InitScripts }, false)},
	{flags: []string{"test-id-attribute"}, env: envs("TEST_ID_ATTRIBUTE"), help: "attribute for test ids (default data-testid)", set: str(func(c *Config) *string { return &c.TestIDAttribute })},
	{flags: []string{"save-session"}, env: envs("SAVE_SESSION"), isBool: true, help: "write every tool call and response to a session log in the output dir", set: boolean(func(c *Config) *bool { return &c.SaveSession })},
	{flags: []string{"shared-browser-context"}, env: envs("SHARED_BROWSER_CONTEXT"), isBool: true, help: "refused: every HTTP session has a browser context of its own; --http-isolation=context puts them in one browser", set: boolean(func(c *Config) *bool { return &c.SharedBrowserContext })},
	{flags: []string{"allowed-origins"}, env: envs("ALLOWED_ORIGINS"), help: "semicolon-separated origins the browser may request (default all); not a security boundary, does not affect redirects", set: func(c *Config, v string) error { c.AllowedOrigins = semicolonList(v); return nil }},
	{flags: []string{"blocked-origins"}, env: envs("BLOCKED_ORIGINS"), help: "semicolon-separated origins the browser may not request; checked before --allowed-origins; not a security boundary, does not affect redirects", set: func(c *Config, v string) error { c.BlockedOrigins = semicolonList(v); return nil }},
	{flags: []string{"output-max-size"}, env: envs("OUTPUT_MAX_SIZE"), help: "evict the oldest files in the output dir past this many bytes (default no limit)", set: func(c *Config, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return &valueError{want: "not a non-negative number of bytes", err: err}
		}
		c.OutputMaxSize = n
		return nil
	}},
	{flags: []string{"file-paths"}, env: envs("FILE_PATHS"), help: "relative (default) or absolute paths in tool results", set: enum(func(c *Config) *string { return &c.FilePaths }, "relative", "absolute")},
	{flags: []string{"cdp-endpoint"}, env: envs("CDP_ENDPOINT"), help: "attach to the browser at this CDP endpoint (http://host:port or ws://…) instead of launching one", set: str(func(c *Config) *string { return &c.CDPEndpoint })},
	{flags: []string{"cdp-header"}, reset: func(c *Config) { c.CDPHeaders = nil }, env: envs("CDP_HEADERS"), multi: true, help: `"Name: value" header sent with the CDP connect request (repeatable)`, set: func(c *Config, v string) error { c.CDPHeaders = parseHeader(c.CDPHeaders, v); return nil }},
	{flags: []string{"cdp-timeout"}, env: envs("CDP_TIMEOUT"), help: "ms to wait for --cdp-endpoint or --endpoint to answer (default 30000)", set: millis(func(c *Config) *time.Duration { return &c.CDPTimeout })},
	{flags: []string{"endpoint"}, env: envs("ENDPOINT"), help: "connect to this Playwright server (ws://…, e.g. `playwright run-server`) instead of launching", set: str(func(c *Config) *string { return &c.Endpoint })},
	{flags: []string{"remote-header"}, reset: func(c *Config) { c.EndpointHeaders = nil }, env: envs("REMOTE_HEADERS"), multi: true, help: `"Name: value" header sent with the --endpoint connect request (repeatable)`, set: func(c *Config, v string) error { c.EndpointHeaders = parseHeader(c.EndpointHeaders, v); return nil }},
	{flags: []string{"extension"}, env: envs("EXTENSION"), isBool: true, help: "refused: the Playwright Extension needs the Node server", set: boolean(func(c *Config) *bool { return &c.Extension })},
	{flags: []string{"init-page"}, reset: func(c *Config) { c.InitPage = nil }, env: envs("INIT_PAGE"), multi: true, help: "refused: TypeScript init pages need the Node server", set: appendTo(func(c *Config) *[]string { return &c.InitPage }, false)},
	{flags: []string{"profile-dir-name"}, env: envs("PROFILE_DIR_NAME"), help: "refused: only meaningful with --extension", set: str(func(c *Config) *string { return &c.ProfileDirName })},

	{flags: []string{"browser-engine"}, env: []string{"CLOAK_PLAYWRIGHT_MCP_BROWSER_ENGINE", "PLAYWRIGHT_MCP_BROWSER_ENGINE"}, help: "cloak (default: CloakBrowser) or playwright (a plain system Chromium)", set: enum(func(c *Config) *string { return &c.BrowserEngine }, "cloak", "playwright")},
	{flags: []string{"release-channel"}, env: append(envs("RELEASE_CHANNEL"), "CLOAKBROWSER_RELEASE_CHANNEL"), help: "CloakBrowser release channel: stable (default) or preview (Pro only)", set: enum(func(c *Config) *string { return &c.ReleaseChannel }, "stable", "preview")},
	{flags: []string{"stealth-args"}, env: envs("STEALTH_ARGS"), isBool: true, help: "bridge compatibility: CloakBrowser's stealth arguments are always on with the cloak engine", set: boolean(func(c *Config) *bool { return &c.StealthArgs })},
	{flags: []string{"console-fallback"}, env: envs("CONSOLE_FALLBACK"), isBool: true, help: "bridge compatibility: console messages are captured natively, nothing to fall back to", set: boolean(func(c *Config) *bool { return &c.ConsoleFallback })},
	{flags: []string{"geoip-proxy-match"}, env: envs("GEOIP_PROXY_MATCH"), isBool: true, help: "refused: needs CloakBrowser's GeoIP database; set --extra-args --fingerprint-timezone/--lang instead", set: boolean(func(c *Config) *bool { return &c.GeoIPProxyMatch })},
	{flags: []string{"context-options"}, env: envs("CONTEXT_OPTIONS"), help: "JSON of extra context options (locale, timezoneId, colorScheme, geolocation, extraHTTPHeaders, …)", set: func(c *Config, v string) error {
		return applyContextJSON(c, []byte(v))
	}},
	{flags: []string{"https-pfx"}, env: envs("HTTPS_PFX"), help: "refused: convert the PKCS#12 file to PEM and use --https-cert/--https-key", set: str(func(c *Config) *string { return &c.HTTP.PFXFile })},
	{flags: []string{"https-passphrase"}, env: envs("HTTPS_PASSPHRASE"), help: "passphrase of --https-pfx (refused with it)", set: str(func(c *Config) *string { return &c.HTTP.PFXPassphrase })},
}

// contextKeys are the browser.contextOptions keys this server applies.
var contextKeys = []string{"viewport", "userAgent", "permissions", "storageState", "ignoreHTTPSErrors", "serviceWorkers", "proxy",
	"locale", "timezoneId", "colorScheme", "reducedMotion", "deviceScaleFactor", "isMobile", "hasTouch", "javaScriptEnabled",
	"bypassCSP", "offline", "geolocation", "extraHTTPHeaders", "httpCredentials", "acceptDownloads", "screen", "recordVideo"}

// launchKeys are the browser.launchOptions keys this server applies.
var launchKeys = []string{"executablePath", "headless", "args", "chromiumSandbox", "channel", "proxy", "env", "slowMo", "timeout", "ignoreDefaultArgs", "downloadsPath", "handleSIGINT", "handleSIGTERM", "handleSIGHUP"}

func unknownKey(where string, m map[string]json.RawMessage, known []string) error {
	for k := range m {
		ok := false
		for _, kk := range known {
			ok = ok || k == kk
		}
		if !ok {
			return fmt.Errorf("%s.%s is not supported by this server; supported keys: %s", where, k, strings.Join(known, ", "))
		}
	}
	return nil
}

type proxyJSON struct {
	Server   string `json:"server"`
	Bypass   string `json:"bypass"`
	Username string `json:"username"`
	Password string `json:"password"`
}

// applyContextJSON applies a browser.contextOptions object.
func applyContextJSON(c *Config, b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return &valueError{want: "not a JSON object", err: err}
	}
	if err := unknownKey("browser.contextOptions", raw, contextKeys); err != nil {
		return err
	}
	var f struct {
		ContextOptions
		Viewport *struct {
			Width  int `json:"width"`
			Height int `json:"height"`
		} `json:"viewport"`
		UserAgent         string     `json:"userAgent"`
		Permissions       []string   `json:"permissions"`
		StorageState      any        `json:"storageState"`
		IgnoreHTTPSErrors *bool      `json:"ignoreHTTPSErrors"`
		ServiceWorkers    string     `json:"serviceWorkers"`
		Proxy             *proxyJSON `json:"proxy"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return jsonError("", b, err)
	}
	if err := checkRecordVideo(raw["recordVideo"], f.RecordVideo); err != nil {
		return err
	}
	mergeContext(&c.Context, f.ContextOptions, raw)
	if f.Viewport != nil {
		c.ViewportSize = fmt.Sprintf("%dx%d", f.Viewport.Width, f.Viewport.Height)
	}
	if f.UserAgent != "" {
		c.UserAgent = f.UserAgent
	}
	if f.Permissions != nil {
		c.GrantPermissions = f.Permissions
	}
	switch st := f.StorageState.(type) {
	case nil:
	case string:
		c.StorageState = st
	default:
		return fmt.Errorf("browser.contextOptions.storageState must be a file path")
	}
	if f.IgnoreHTTPSErrors != nil {
		c.IgnoreHTTPSErrors = *f.IgnoreHTTPSErrors
	}
	switch f.ServiceWorkers {
	case "":
	case "block":
		c.BlockServiceWorkers = true
	case "allow":
		c.BlockServiceWorkers = false
	default:
		return fmt.Errorf("browser.contextOptions.serviceWorkers=%q: must be allow or block", f.ServiceWorkers)
	}
	applyProxy(c, f.Proxy)
	return nil
}

// mergeContext copies the keys present in raw from src to dst.
func mergeContext(dst *ContextOptions, src ContextOptions, raw map[string]json.RawMessage) {
	has := func(k string) bool { _, ok := raw[k]; return ok }
	if has("locale") {
		dst.Locale = src.Locale
	}
	if has("timezoneId") {
		dst.TimezoneID = src.TimezoneID
	}
	if has("colorScheme") {
		dst.ColorScheme = src.ColorScheme
	}
	if has("reducedMotion") {
		dst.ReducedMotion = src.ReducedMotion
	}
	if has("deviceScaleFactor") {
		dst.DeviceScaleFactor = src.DeviceScaleFactor
	}
	if has("isMobile") {
		dst.IsMobile = src.IsMobile
	}
	if has("hasTouch") {
		dst.HasTouch = src.HasTouch
	}
	if has("javaScriptEnabled") {
		dst.JavaScriptEnabled = src.JavaScriptEnabled
	}
	if has("bypassCSP") {
		dst.BypassCSP = src.BypassCSP
	}
	if has("offline") {
		dst.Offline = src.Offline
	}
	if has("geolocation") {
		dst.Geolocation = src.Geolocation
	}
	if has("extraHTTPHeaders") {
		dst.ExtraHTTPHeaders = src.ExtraHTTPHeaders
	}
	if has("httpCredentials") {
		dst.HTTPCredentials = src.HTTPCredentials
	}
	if has("recordVideo") {
		dst.RecordVideo = src.RecordVideo
	}
}

func applyProxy(c *Config, p *proxyJSON) {
	if p == nil {
		return
	}
	if p.Server != "" {
		c.ProxyServer = p.Server
	}
	if p.Bypass != "" {
		c.ProxyBypass = p.Bypass
	}
	if p.Username != "" {
		c.Launch.ProxyUsername, c.Launch.ProxyPassword = p.Username, p.Password
	}
}

// applyLaunchJSON applies a browser.launchOptions object.
func applyLaunchJSON(c *Config, b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("browser.launchOptions: %w", err)
	}
	if err := unknownKey("browser.launchOptions", raw, launchKeys); err != nil {
		return err
	}
	var lo struct {
		ExecutablePath    string            `json:"executablePath"`
		Headless          *bool             `json:"headless"`
		Args              []string          `json:"args"`
		ChromiumSandbox   *bool             `json:"chromiumSandbox"`
		Channel           string            `json:"channel"`
		Proxy             *proxyJSON        `json:"proxy"`
		Env               map[string]string `json:"env"`
		SlowMo            float64           `json:"slowMo"`
		Timeout           float64           `json:"timeout"`
		IgnoreDefaultArgs []string          `json:"ignoreDefaultArgs"`
	}
	if err := json.Unmarshal(b, &lo); err != nil {
		return jsonError("browser.launchOptions", b, err)
	}
	if lo.ExecutablePath != "" {
		c.BinaryPath, c.BinaryPathSource = lo.ExecutablePath, "flag"
	}
	if lo.Headless != nil {
		c.Headless = *lo.Headless
	}
	c.ExtraArgs = append(c.ExtraArgs, lo.Args...)
	if lo.ChromiumSandbox != nil {
		ns := !*lo.ChromiumSandbox
		c.NoSandbox = &ns
	}
	if lo.Channel != "" && lo.Channel != "chrome-for-testing" {
		c.Browser = lo.Channel
	}
	applyProxy(c, lo.Proxy)
	if lo.Env != nil {
		c.Launch.Env = lo.Env
	}
	if lo.SlowMo > 0 {
		c.Launch.SlowMo = time.Duration(lo.SlowMo * float64(time.Millisecond))
	}
	if lo.Timeout > 0 {
		c.Launch.Timeout = time.Duration(lo.Timeout * float64(time.Millisecond))
	}
	c.Launch.IgnoreDefaultArgs = append(c.Launch.IgnoreDefaultArgs, lo.IgnoreDefaultArgs...)
	return nil
}

// validateDropin checks the drop-in settings; bad adds one failure.
func (c Config) validateDropin(bad func(setting string, v any, why string)) {
	switch c.Browser {
	case "", "chromium", "chrome", "chrome-beta", "chrome-dev", "chrome-canary", "msedge", "msedge-beta", "msedge-dev", "msedge-canary":
	case "firefox", "webkit", "moz-firefox", "moz-firefox-beta", "moz-firefox-nightly":
		bad("--browser", c.Browser, "this server drives Chromium only; use chromium (default), chrome or msedge")
	default:
		bad("--browser", quote(c.Browser), "must be chromium, chrome, msedge or a chrome-/msedge- channel (beta, dev, canary)")
	}
	for _, e := range []struct {
		setting, v string
		allowed    []string
	}{
		{"--codegen", c.Codegen, []string{"typescript", "python", "java", "csharp", "none"}},
		{"--image-responses", c.ImageResponses, []string{"allow", "omit", "only"}},
		{"--console-level", c.ConsoleLevel, []string{"error", "warning", "info", "debug"}},
		{"--file-paths", c.FilePaths, []string{"relative", "absolute"}},
	} {
		if !oneOf(e.v, e.allowed...) {
			bad(e.setting, quote(e.v), "must be one of "+strings.Join(e.allowed, ", "))
		}
	}
	if c.OutputMaxSize < 0 {
		bad("--output-max-size", c.OutputMaxSize, "must be a non-negative number of bytes")
	}
	if c.Mobile && c.Device != "" {
		bad("--mobile", true, "cannot be combined with --device: pick one")
	}
	if c.DeviceName() != "" && c.CDPEndpoint != "" {
		bad("--device", quote(c.DeviceName()), "device emulation is not supported with --cdp-endpoint")
	}
	if c.CDPEndpoint != "" && c.Endpoint != "" {
		bad("--endpoint", quote(c.Endpoint), "cannot be combined with --cdp-endpoint: pick one")
	}
	if c.CDPEndpoint != "" {
		if u, err := url.Parse(c.CDPEndpoint); err != nil || u.Host == "" || !oneOf(u.Scheme, "http", "https", "ws", "wss") {
			bad("--cdp-endpoint", quote(c.CDPEndpoint), "must be http(s)://host:port or ws(s)://host:port/…")
		}
	}
	if c.Endpoint != "" {
		if u, err := url.Parse(c.Endpoint); err != nil || u.Host == "" || !oneOf(u.Scheme, "ws", "wss", "http", "https") {
			bad("--endpoint", quote(c.Endpoint), "must be a Playwright server URL, ws://host:port/…")
		}
	}
	if c.CDPTimeout <= 0 {
		bad("--cdp-timeout", c.CDPTimeout.Milliseconds(), "must be positive milliseconds")
	}
	if c.ProxyServer != "" && checkProxyServer(c.ProxyServer) != nil {
		bad("--proxy-server", quote(redactURL(c.ProxyServer)), "must be http://, https://, socks4:// or socks5:// host:port")
	}
	if c.StorageState != "" {
		if _, err := os.Stat(c.StorageState); err != nil {
			bad("--storage-state", quote(c.StorageState), "cannot be read ("+shortErr(err)+"): give a storage-state JSON file")
		}
	}
	for _, p := range c.InitScripts {
		if f, err := os.Open(p); err != nil {
			bad("--init-script", quote(p), "cannot be read ("+shortErr(err)+"): give a JavaScript file")
		} else {
			f.Close()
		}
	}
	if c.TimeoutSettle < 0 {
		bad("--timeout-settle", c.TimeoutSettle.Milliseconds(), "must be non-negative milliseconds")
	}
	if c.TestIDAttribute == "" {
		bad("--test-id-attribute", `""`, "must name an attribute, e.g. data-testid")
	}
	if c.Extension {
		bad("--extension", true, "the Playwright Extension bridge needs @playwright/mcp's Node server; attach to your browser with --cdp-endpoint instead")
	}
	if len(c.InitPage) > 0 {
		bad("--init-page", quote(c.InitPage[0]), "TypeScript init pages run on @playwright/mcp's Node page object and cannot run in this Go server; use --init-script for page JavaScript")
	}
	if c.ProfileDirName != "" {
		bad("--profile-dir-name", quote(c.ProfileDirName), "only applies to --extension, which this server does not support")
	}
	// Not built yet: refused rather than silently ignored (docs/configuration.md, "Moving
	// from @playwright/mcp").
	if c.SharedBrowserContext {
		bad("--shared-browser-context", true, "is not supported: every HTTP session has a browser context of its own, whose pages, browser_close and restarts are that session's alone; use --http-isolation=context (one browser, a context per session) instead")
	}
	if c.BrowserEngine == "playwright" && c.BinaryPath == "" {
		bad("--browser-engine", "playwright", "needs --executable-path to a plain Chromium (e.g. /usr/bin/chromium); without it this server uses CloakBrowser")
	}
	if c.GeoIPProxyMatch {
		bad("--geoip-proxy-match", true, "needs CloakBrowser's GeoIP database, which this server does not download; pass --extra-args=--fingerprint-timezone=…,--lang=… for your proxy's region")
	}
	if c.ReleaseChannel == "preview" {
		bad("--release-channel", "preview", "preview builds are CloakBrowser Pro only, which this server does not support; use stable")
	}
	if c.HTTP.PFXFile != "" {
		bad("--https-pfx", quote(c.HTTP.PFXFile), "PKCS#12 is not supported: convert it (openssl pkcs12 -in f.pfx -nodes) and pass --https-cert and --https-key")
	}
}

func oneOf(s string, set ...string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// redactURL drops a URL's password so it never reaches an error or log.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// checkRecordVideo validates browser.contextOptions.recordVideo: only dir,
// size, fps and showActions, a positive size, a dir inside the output
// directory.
func checkRecordVideo(raw json.RawMessage, rv *RecordVideo) error {
	if rv == nil {
		return nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return fmt.Errorf("browser.contextOptions.recordVideo must be an object such as {\"dir\": \"videos\"}")
	}
	if err := unknownKey("browser.contextOptions.recordVideo", keys, []string{"dir", "size", "fps", "showActions"}); err != nil {
		return err
	}
	if rv.FPS < 0 || rv.FPS > 60 {
		return fmt.Errorf("browser.contextOptions.recordVideo.fps=%d: must be 1 to 60", rv.FPS)
	}
	if err := checkVideoActions(keys["showActions"], rv.ShowActions); err != nil {
		return err
	}
	if s := rv.Size; s != nil && (s.Width <= 0 || s.Height <= 0 || s.Width > 8192 || s.Height > 8192) {
		return fmt.Errorf("browser.contextOptions.recordVideo.size=%dx%d: width and height must be 1 to 8192", s.Width, s.Height)
	}
	if d := rv.Dir; d != "" && (strings.ContainsRune(d, 0) || !filepath.IsAbs(d) && !filepath.IsLocal(filepath.Clean(d))) {
		return fmt.Errorf("browser.contextOptions.recordVideo.dir=%q: must be a directory inside the output directory (--output-dir), e.g. \"videos\"", d)
	}
	return nil
}

// checkVideoActions validates recordVideo.showActions against Playwright's
// values, with the bounds browser_video_show_actions has.
func checkVideoActions(raw json.RawMessage, a *VideoActions) error {
	if a == nil {
		return nil
	}
	const where = "browser.contextOptions.recordVideo.showActions"
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return fmt.Errorf("%s must be an object such as {\"position\": \"top-left\"}", where)
	}
	if err := unknownKey(where, keys, []string{"duration", "position", "fontSize", "cursor", "style"}); err != nil {
		return err
	}
	if a.Duration < 0 || a.Duration > 60_000 {
		return fmt.Errorf("%s.duration=%v: must be 1 to 60000 milliseconds", where, a.Duration)
	}
	if a.Position != "" && !slices.Contains([]string{"top-left", "top", "top-right", "bottom-left", "bottom", "bottom-right"}, a.Position) {
		return fmt.Errorf("%s.position=%q: must be top-left, top, top-right, bottom-left, bottom or bottom-right", where, a.Position)
	}
	if a.FontSize < 0 || a.FontSize > 200 {
		return fmt.Errorf("%s.fontSize=%d: must be 1 to 200 pixels", where, a.FontSize)
	}
	if a.Cursor != "" && a.Cursor != "pointer" && a.Cursor != "none" {
		return fmt.Errorf("%s.cursor=%q: must be \"pointer\" or \"none\"", where, a.Cursor)
	}
	if st := a.Style; st != nil {
		var sk map[string]json.RawMessage
		_ = json.Unmarshal(keys["style"], &sk)
		if err := unknownKey(where+".style", sk, []string{"point", "highlight", "title"}); err != nil {
			return err
		}
		for _, css := range []string{st.Point, st.Highlight, st.Title} {
			if strings.ContainsAny(css, "<>") || len(css) > 1000 {
				return fmt.Errorf("%s.style values must be inline CSS declarations of at most 1000 bytes, e.g. \"outline: 2px solid #333\"", where)
			}
		}
	}
	return nil
}
