// Package config holds the server's one Config struct and fills it from a
// JSON config file, environment variables and command-line flags, in that
// order of precedence (flags win), validating it once with errors that name
// the setting and the bad value.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/portrange"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
)

// Transports.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "streamable-http"
)

// Config is everything the server is configured with. The zero value is not
// ready: use Default and then Load.
type Config struct {
	// Transport is "stdio" (default) or "streamable-http".
	Transport string

	// BinaryPath is an explicit browser binary (--binary-path,
	// CLOAKBROWSER_BINARY_PATH, or upstream's --executable-path).
	BinaryPath string
	// BinaryPathSource says where BinaryPath came from: "flag" or "env".
	BinaryPathSource string
	// NoDownload forbids downloading CloakBrowser; resolution then uses the
	// cache or a system Chromium.
	NoDownload bool
	// Headless runs the browser without a window. Default true.
	Headless bool
	// NoSandbox adds --no-sandbox. If nil: on when running as root.
	NoSandbox *bool
	// UserDataDir is a persistent profile. If empty, each browser gets a
	// temporary profile removed when it closes (upstream's --isolated).
	UserDataDir string
	// Isolated is accepted for upstream compatibility; isolation is the
	// default unless UserDataDir is set.
	Isolated bool
	// ExtraArgs are appended to the browser's command line.
	ExtraArgs []string
	// FingerprintSeed fixes CloakBrowser's fingerprint seed; 0 means random.
	FingerprintSeed int
	// ViewportSize is "WIDTHxHEIGHT"; empty means Playwright's default.
	ViewportSize string

	// DriverDir is the Playwright driver directory; empty means the user
	// cache directory.
	DriverDir string
	// NodePath is the Node.js binary that runs the driver; empty means
	// $PLAYWRIGHT_NODEJS_PATH or node on PATH.
	NodePath string
	// FFmpegPath is the ffmpeg video recording uses (--ffmpeg-path); empty
	// means ffmpeg on PATH, else the one Playwright installs into its own
	// registry. A missing one is not an error at start: the video tools
	// answer that ffmpeg is needed.
	FFmpegPath string
	// NoAutoInstall stops serve from installing a missing driver.
	NoAutoInstall bool

	// Caps are upstream's opt-in capability groups (vision, pdf, …).
	Caps []string
	// Vision is upstream's legacy --vision flag: Load adds "vision" to Caps
	// when it is set, as upstream does, wherever --caps stands.
	Vision bool
	// OutputDir receives screenshots, downloads and traces. Default
	// ".playwright-mcp" under the working directory, like upstream.
	OutputDir string
	// AllowUnrestrictedFileAccess permits file: URLs and any upload path.
	AllowUnrestrictedFileAccess bool
	// TimeoutAction bounds element actions. Default 5s.
	TimeoutAction time.Duration
	// TimeoutNavigation bounds navigations. Default 60s.
	TimeoutNavigation time.Duration
	// MaxDownloadBytes caps the bytes all of one session's downloads may take
	// in OutputDir. Default 256 MiB.
	MaxDownloadBytes int64
	// MaxDownloads caps the downloads one session may start. Default 100.
	MaxDownloads int
	// MaxTabs caps the tabs one session may have open (browser_tabs new
	// and the popups its pages open). Default 32.
	MaxTabs int
	// MaxConcurrentCalls caps the tool calls one session may have in
	// flight; one more is refused at once as busy. Default 8.
	MaxConcurrentCalls int

	// LogLevel is debug, info, warn or error. Default info.
	LogLevel string

	// Drop-in settings: @playwright/mcp's options, with its names.

	// Codegen is the language of "### Ran Playwright code": typescript
	// (default), python, java, csharp or none (no section).
	Codegen string
	// SecretsFile is the dotenv file Secrets was read from ("" for none).
	SecretsFile string
	// Secrets maps a secret's NAME to its value (from SecretsFile, or the
	// config file's "secrets"). If nil, there are no secrets. Text the agent
	// types that equals a NAME is typed as its value; values are redacted from
	// every response and log as <secret>NAME</secret>.
	Secrets map[string]string
	// ImageResponses is allow (default), omit or only.
	ImageResponses string
	// SnapshotMode is what navigation and action responses show of the
	// page (--snapshot-mode): "outline" (default: small pages whole, large
	// ones as a budgeted outline; actions show a diff), "inline" (the whole
	// page up to 40,000 characters), "full" (the whole page, unbounded, as
	// upstream) or "none" (no snapshot; call browser_snapshot).
	SnapshotMode string
	// ImageMaxSide and ImageMaxBytes bound the images answers carry
	// (screenshots): a larger one is sent scaled down (and as JPEG when
	// still over the bytes), the scale stated, the file kept full size.
	// Zero means no bound. Defaults 1568 px and 800 KiB.
	ImageMaxSide  int
	ImageMaxBytes int
	// SnapshotBoxes adds [box=x,y,w,h] to snapshot lines. Default false.
	SnapshotBoxes bool
	// NoWebMCP stops collecting and exposing the page's WebMCP tools
	// (upstream's --no-webmcp); they are collected only with the "webmcp"
	// capability (WebMCPEnabled).
	NoWebMCP bool
	// ConsoleLevel is the least severe console message browser_console_messages
	// returns: error, warning, info (default) or debug.
	ConsoleLevel string
	// TimeoutSettle bounds how long an action waits for the requests it set
	// off to end. If zero, the session's default (2s: longer than
	// upstream's 500ms, so a slow XHR shows in the action's diff).
	TimeoutSettle time.Duration
	// TimeoutExpect bounds assertions (config file timeouts.expect). If zero,
	// TimeoutAction.
	TimeoutExpect time.Duration
	// IdleTimeout closes the browser after this long without a completed
	// tool call; the next call relaunches it. If nil: 1h when headless, never
	// when headed. A zero value disables it. See IdleAfter.
	IdleTimeout *time.Duration

	// Browser is upstream's --browser: "" or chromium (the resolved
	// CloakBrowser/Chromium), chrome*, msedge* (a Chromium-family binary of
	// that channel, when installed). firefox and webkit are refused.
	Browser string
	// Device is a Playwright device descriptor name ("iPhone 15"); "" none.
	Device string
	// Mobile emulates upstream's generic mobile device (Pixel 10 when the
	// driver knows it, else the newest Pixel it has).
	Mobile bool
	// UserAgent overrides the browser's user agent; "" keeps it.
	UserAgent string
	// GrantPermissions are granted to every context ("geolocation", …).
	GrantPermissions []string
	// IgnoreHTTPSErrors accepts invalid certificates.
	IgnoreHTTPSErrors bool
	// ProxyServer is http://, https://, socks4:// or socks5:// host:port,
	// optionally with user:password@; "" means no proxy.
	ProxyServer string
	// ProxyBypass is a comma-separated list of hosts not proxied.
	ProxyBypass string
	// BlockServiceWorkers stops pages registering service workers.
	BlockServiceWorkers bool
	// StorageState is a storage-state JSON file loaded into every new
	// context (cookies and localStorage); "" none.
	StorageState string
	// InitScripts are JavaScript files run in every page before its scripts.
	InitScripts []string
	// TestIDAttribute is the attribute getByTestId uses. Default data-testid.
	TestIDAttribute string
	// SaveSession writes each tool call and its response to a session log
	// in OutputDir.
	SaveSession bool
	// SharedBrowserContext is upstream's --shared-browser-context (one
	// browser context for all HTTP clients). Validate refuses it: every
	// session here owns its context (its pages, browser_close, restarts).
	SharedBrowserContext bool
	// AllowedOrigins, if set, lets the browser request only these origins
	// (scheme://host[:port], or host patterns). Not a security boundary.
	AllowedOrigins []string
	// BlockedOrigins are origins the browser may not request; evaluated
	// before AllowedOrigins. Not a security boundary.
	BlockedOrigins []string
	// OutputMaxSize, if positive, evicts the oldest files in OutputDir once
	// their total passes this many bytes. If zero, no limit.
	OutputMaxSize int64
	// FilePaths renders paths in tool results "relative" (default, to the
	// working directory) or "absolute".
	FilePaths string
	// Context holds browser.contextOptions keys (and the bridge's
	// CLOAK_PLAYWRIGHT_MCP_CONTEXT_OPTIONS) beyond those with a flag.
	Context ContextOptions
	// Launch holds browser.launchOptions keys beyond those with a flag.
	Launch LaunchOptions

	// CDPEndpoint attaches to a running browser over CDP instead of
	// launching one; "" launches.
	CDPEndpoint string
	// CDPHeaders are sent with the CDP connect request.
	CDPHeaders map[string]string
	// CDPTimeout bounds connecting to CDPEndpoint. Default 30s.
	CDPTimeout time.Duration
	// Endpoint is a Playwright server (ws://…, e.g. the driver's
	// run-server) to connect to instead of launching; "" launches.
	Endpoint string
	// EndpointHeaders are sent with the Endpoint connect request.
	EndpointHeaders map[string]string

	// Refused options: set only to produce a clear start error.
	Extension      bool
	InitPage       []string
	ProfileDirName string

	// Bridge options (swimmwatch/cloakbrowser-mcp).

	// BrowserEngine is cloak (default: CloakBrowser) or playwright (a plain
	// system Chromium, no stealth arguments).
	BrowserEngine string
	// ReleaseChannel is CloakBrowser's stable (default) or preview.
	ReleaseChannel string
	// StealthArgs is accepted for the bridge: stealth arguments are always
	// on with the cloak engine.
	StealthArgs bool
	// ConsoleFallback is accepted for the bridge: console capture is native.
	ConsoleFallback bool
	// GeoIPProxyMatch is refused: it needs CloakBrowser's GeoIP database.
	GeoIPProxyMatch bool

	// HTTP is the Streamable HTTP transport's configuration.
	HTTP HTTP
	// CDP is the leased CDP proxy's configuration.
	CDP CDP
}

// HTTP configures the Streamable HTTP transport.
type HTTP struct {
	// Host is the bind address. Default 127.0.0.1.
	Host string
	// Port is the TCP port. Default 3000.
	Port int
	// Endpoint is the MCP path. Default /mcp.
	Endpoint string
	// AuthToken enables Bearer authentication when set.
	AuthToken string
	// AuthTokens are more accepted Bearer tokens. Each token (AuthToken
	// included) is its own principal: a session is bound to the token that
	// created it and is invisible to the others.
	AuthTokens []string
	// Protocol is http or https.
	Protocol string
	// CertFile and KeyFile are the TLS certificate and key for https.
	CertFile, KeyFile string
	// PFXFile and PFXPassphrase are the bridge's PKCS#12 options; a PFXFile
	// is refused at start (convert it to PEM).
	PFXFile, PFXPassphrase string
	// SessionMax caps concurrent sessions. Default 32.
	SessionMax int
	// SessionMaxPerPrincipal caps the concurrent sessions of one principal
	// (one auth token; everyone is one principal without tokens). If zero,
	// only SessionMax applies.
	SessionMaxPerPrincipal int
	// SessionIdleTTL closes sessions idle this long. Default 1h.
	SessionIdleTTL time.Duration
	// SessionBackend stores session metadata: "memory" (default) or "redis".
	SessionBackend string
	// RedisURL is the Redis server for the redis backend.
	RedisURL string
	// RedisKeyPrefix starts every key the fleet writes, so fleets can share
	// one Redis. Default "cloakbrowser-mcp:".
	RedisKeyPrefix string
	// ClusterSecret authenticates requests one instance forwards to
	// another; every instance of a fleet has the same. Required with the
	// redis backend.
	ClusterSecret string
	// ClusterAdvertiseURL is the base URL other instances reach this one at
	// (http://10.0.0.5:8931). If empty, the listen address when it names a
	// host.
	ClusterAdvertiseURL string
	// ClusterHeartbeatTTL is how long an instance counts as alive after its
	// last heartbeat (its sessions answer 404 elsewhere once it expires).
	// Default 5s.
	ClusterHeartbeatTTL time.Duration
	// BrowserEndpointPool lists remote browsers (Playwright servers ws://…
	// or CDP endpoints http://…) that HTTP sessions attach to instead of
	// launching one: each new session takes the least-loaded endpoint.
	BrowserEndpointPool []string
	// AllowedHosts are extra Host header values accepted.
	AllowedHosts []string
	// AllowedOrigins are Origin header values accepted.
	AllowedOrigins []string
	// AllowNonLoopback permits binding a non-loopback address without auth.
	AllowNonLoopback bool
	// Isolation is "browser" (a browser process per session) or "context".
	Isolation string
	// MaxBodyBytes caps a request body. Default 4 MiB.
	MaxBodyBytes int64
	// BodyReadTimeout bounds reading one request body; BodyIdleTimeout
	// bounds the wait for its next bytes. A body past either is cut and the
	// connection closed. If zero, 60s and 15s. No flag: they exist for
	// tests and embedders.
	BodyReadTimeout, BodyIdleTimeout time.Duration
}

// Tokens returns every accepted Bearer token; none means no authentication.
func (h HTTP) Tokens() []string {
	var out []string
	if h.AuthToken != "" {
		out = append(out, h.AuthToken)
	}
	for _, t := range h.AuthTokens {
		if t != "" {
			out = append(out, t)
		}
	}
	return out
}

// CDP configures the leased CDP proxy.
type CDP struct {
	Enabled          bool
	PortRange        string
	Host             string
	AllowRemote      bool
	AdvertisedHost   string
	AdvertisedScheme string
}

// Default returns the configuration with every default filled in.
func Default() Config {
	return Config{
		Transport:          TransportStdio,
		Headless:           true,
		OutputDir:          ".playwright-mcp",
		TimeoutAction:      5 * time.Second,
		TimeoutNavigation:  60 * time.Second,
		MaxDownloadBytes:   256 << 20,
		MaxDownloads:       100,
		MaxTabs:            32,
		MaxConcurrentCalls: 8,
		LogLevel:           "info",
		Codegen:            "typescript",
		ImageResponses:     "allow",
		SnapshotMode:       "outline",
		ImageMaxSide:       1568,
		ImageMaxBytes:      800 << 10,
		ConsoleLevel:       "info",
		TestIDAttribute:    "data-testid",
		FilePaths:          "relative",
		CDPTimeout:         30 * time.Second,
		BrowserEngine:      "cloak",
		ReleaseChannel:     "stable",
		HTTP: HTTP{
			Host:           "127.0.0.1",
			Port:           3000,
			Endpoint:       "/mcp",
			Protocol:       "http",
			SessionMax:     32,
			SessionIdleTTL: time.Hour,
			SessionBackend: "memory",
			Isolation:      "browser",
			MaxBodyBytes:   4 << 20,
		},
		CDP: CDP{Host: "127.0.0.1", AdvertisedScheme: "http"},
	}
}

// SandboxOff reports whether --no-sandbox applies.
func (c Config) SandboxOff() bool {
	if c.NoSandbox != nil {
		return *c.NoSandbox
	}
	return os.Geteuid() == 0
}

// Viewport parses ViewportSize; ok is false when unset.
func (c Config) Viewport() (w, h int, ok bool) {
	if c.ViewportSize == "" {
		return 0, 0, false
	}
	// "1280x720", or upstream's other form "1280,720".
	ws, hs, ok := strings.Cut(c.ViewportSize, "x")
	if !ok {
		ws, hs, ok = strings.Cut(c.ViewportSize, ",")
	}
	var err1, err2 error
	w, err1 = strconv.Atoi(strings.TrimSpace(ws))
	h, err2 = strconv.Atoi(strings.TrimSpace(hs))
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return w, h, true
}

// CapSet returns Caps as a set, with upstream's aliases applied.
func (c Config) CapSet() map[string]bool {
	m := map[string]bool{}
	for _, cp := range c.Caps {
		cp = strings.TrimSpace(cp)
		if cp == "tracing" {
			cp = "devtools"
		}
		if cp != "" {
			m[cp] = true
		}
	}
	return m
}

// WebMCPEnabled reports whether the tools pages register through WebMCP
// become MCP tools: with --caps webmcp and without --no-webmcp. It also
// launches the browser with --enable-features=WebMCP, which gives every
// page document.modelContext (a fingerprint difference), hence opt-in.
func (c Config) WebMCPEnabled() bool { return c.CapSet()["webmcp"] && !c.NoWebMCP }

// knownCaps are the capability groups --caps accepts.
var knownCaps = []string{"vision", "pdf", "devtools", "tracing", "testing", "network", "storage", "config", "downloads", "emulation", "interactions", "snapshot", "webmcp", "export", "core"}

// KnownCaps returns a copy of the capability groups --caps accepts.
func KnownCaps() []string { return slices.Clone(knownCaps) }

// settingError is one Validate failure: "<setting>=<value>: <why>", keeping
// the underlying error, if any, for errors.Is and errors.As.
type settingError struct {
	setting string
	value   any
	why     string
	err     error
}

func (e *settingError) Error() string { return fmt.Sprintf("%s=%v: %s", e.setting, e.value, e.why) }

func (e *settingError) Unwrap() error { return e.err }

// Validate checks the configuration and names the setting at fault.
func (c Config) Validate() error {
	var errs []error
	bad := func(setting string, v any, why string) {
		errs = append(errs, &settingError{setting: setting, value: v, why: why})
	}
	badErr := func(setting string, v any, why string, err error) {
		errs = append(errs, &settingError{setting: setting, value: v, why: why, err: err})
	}
	switch c.Transport {
	case TransportStdio, TransportHTTP:
	default:
		bad("--transport", c.Transport, "must be stdio or streamable-http")
	}
	if c.BinaryPath != "" {
		st, err := os.Stat(c.BinaryPath)
		switch {
		case err != nil:
			badErr("--binary-path", c.BinaryPath, "not found", err)
		case !st.Mode().IsRegular():
			bad("--binary-path", c.BinaryPath, "not a regular file")
		}
	}
	if c.TimeoutAction <= 0 {
		bad("--timeout-action", c.TimeoutAction.Milliseconds(), "must be positive milliseconds")
	}
	if c.TimeoutNavigation <= 0 {
		bad("--timeout-navigation", c.TimeoutNavigation.Milliseconds(), "must be positive milliseconds")
	}
	if c.MaxDownloadBytes < 1 {
		bad("--max-download-bytes", c.MaxDownloadBytes, "must be at least 1")
	}
	if c.MaxDownloads < 1 {
		bad("--max-downloads", c.MaxDownloads, "must be at least 1")
	}
	if c.MaxTabs < 1 {
		bad("--max-tabs", c.MaxTabs, "must be at least 1")
	}
	if c.MaxConcurrentCalls < 1 {
		bad("--max-concurrent-calls", c.MaxConcurrentCalls, "must be at least 1")
	}
	if c.ViewportSize != "" {
		if w, h, ok := c.Viewport(); !ok || w <= 0 || h <= 0 {
			bad("--viewport-size", c.ViewportSize, "must be WIDTHxHEIGHT, e.g. 1280x720")
		}
	}
	known := map[string]bool{}
	for _, k := range knownCaps {
		known[k] = true
	}
	for _, cp := range c.Caps {
		if cp = strings.TrimSpace(cp); cp != "" && !known[cp] {
			bad("--caps", cp, "unknown capability; known: "+strings.Join(knownCaps, ", "))
		}
	}
	switch c.SnapshotMode {
	case "outline", "inline", "full", "none":
	default:
		bad("--snapshot-mode", c.SnapshotMode, "must be outline, inline, full or none")
	}
	if c.ImageMaxSide < 0 || (c.ImageMaxSide > 0 && c.ImageMaxSide < 16) {
		bad("--image-max-side", c.ImageMaxSide, "must be at least 16 pixels, or 0 for no bound")
	}
	if c.ImageMaxBytes < 0 || (c.ImageMaxBytes > 0 && c.ImageMaxBytes < 4096) {
		bad("--image-max-bytes", c.ImageMaxBytes, "must be at least 4096 bytes, or 0 for no bound")
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("--log-level", c.LogLevel, "must be debug, info, warn or error")
	}
	h := c.HTTP
	if h.Port < 0 || h.Port > 65535 {
		bad("--http-port", h.Port, "must be 0-65535")
	}
	if !strings.HasPrefix(h.Endpoint, "/") || h.Endpoint == "/healthz" || h.Endpoint == "/readyz" {
		bad("--http-endpoint", h.Endpoint, "must start with / and not be /healthz or /readyz")
	}
	switch h.Protocol {
	case "http":
	case "https":
		if h.CertFile == "" || h.KeyFile == "" {
			bad("--http-protocol", h.Protocol, "https needs --https-cert and --https-key")
		}
	default:
		bad("--http-protocol", h.Protocol, "must be http or https")
	}
	if h.SessionMax < 1 {
		bad("--http-session-max", h.SessionMax, "must be at least 1")
	}
	if h.SessionMaxPerPrincipal < 0 {
		bad("--http-session-max-per-principal", h.SessionMaxPerPrincipal, "must be 0 (no per-token cap) or more")
	}
	if h.SessionIdleTTL <= 0 {
		bad("--http-session-idle-ttl-ms", h.SessionIdleTTL.Milliseconds(), "must be positive")
	}
	switch h.SessionBackend {
	case "memory":
	case "redis":
		if h.RedisURL == "" {
			bad("--http-session-backend", h.SessionBackend, "redis needs --redis-url")
		}
		if len(h.ClusterSecret) < 16 {
			bad("--cluster-secret", "<redacted>", "redis needs a shared secret of at least 16 characters (the same on every instance)")
		}
	default:
		bad("--http-session-backend", h.SessionBackend, "must be memory or redis")
	}
	if h.ClusterHeartbeatTTL < 0 {
		bad("--cluster-heartbeat-ttl-ms", h.ClusterHeartbeatTTL.Milliseconds(), "must be positive")
	}
	if h.ClusterAdvertiseURL != "" {
		if u, err := url.Parse(h.ClusterAdvertiseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("--cluster-advertise-url", h.ClusterAdvertiseURL, "must be an http:// or https:// base URL, e.g. http://10.0.0.5:8931")
		}
	}
	for _, e := range h.BrowserEndpointPool {
		if u, err := url.Parse(e); err != nil || u.Host == "" || (u.Scheme != "ws" && u.Scheme != "wss" && u.Scheme != "http" && u.Scheme != "https") {
			bad("--browser-endpoint-pool", e, "each endpoint must be ws:// or wss:// (a Playwright server) or http:// or https:// (a CDP endpoint)")
		}
	}
	switch h.Isolation {
	case "browser", "context":
	default:
		bad("--http-isolation", h.Isolation, "must be browser or context")
	}
	if c.Transport == TransportHTTP && !isLoopback(h.Host) && len(h.Tokens()) == 0 && !h.AllowNonLoopback {
		bad("--http-host", h.Host, "binding a non-loopback address needs --http-auth-token (or --http-allow-non-loopback)")
	}
	if h.MaxBodyBytes < 1024 {
		bad("--http-max-body-bytes", h.MaxBodyBytes, "must be at least 1024")
	}
	if c.Transport == TransportHTTP && c.UserDataDir != "" {
		bad("--user-data-dir", c.UserDataDir, "cannot be shared by HTTP sessions: each gets its own temporary profile")
	}
	if c.Transport == TransportHTTP && h.Isolation == "context" && c.CDP.Enabled {
		bad("--http-isolation", h.Isolation, "a CDP endpoint on the shared browser would reach every session's pages: use --http-isolation=browser with --cdp-enabled")
	}
	if c.CDP.Enabled && c.CDP.PortRange == "" {
		bad("--cdp-port-range", "", "required when --cdp-enabled")
	}
	// With a port range, HTTP sessions may enable CDP through initialize
	// _meta even without --cdp-enabled: check the listener settings then too.
	if c.CDP.Enabled || c.CDP.PortRange != "" {
		if c.CDP.PortRange != "" {
			if _, err := portrange.Parse(c.CDP.PortRange); err != nil {
				badErr("--cdp-port-range", c.CDP.PortRange, err.Error(), err)
			}
		}
		if !isLoopback(c.CDP.Host) && !c.CDP.AllowRemote {
			bad("--cdp-host", c.CDP.Host, "a non-loopback bind needs --cdp-allow-remote")
		}
		if (c.CDP.Host == "0.0.0.0" || c.CDP.Host == "::") && c.CDP.AdvertisedHost == "" {
			bad("--cdp-host", c.CDP.Host, "a wildcard bind needs --cdp-advertised-host")
		}
		if s := c.CDP.AdvertisedScheme; s != "http" && s != "https" {
			bad("--cdp-advertised-scheme", s, "must be http or https")
		}
	}
	c.validateDropin(bad)
	for _, a := range c.ExtraArgs {
		if why := reservedBrowserArg(a); why != "" {
			bad("--extra-args", a, why)
		}
	}
	return errors.Join(errs...)
}

// reservedBrowserArg says why a browser argument may not come from the user,
// or "". Playwright drives the browser over --remote-debugging-pipe; the
// managed CDP endpoint adds its own loopback port and publishes it only
// through the capability proxy. A user port, address or pipe would expose an
// unauthenticated debugger beside both, and --remote-allow-origins would let
// web pages drive it. Nor may a user's args open the ports of the internal
// DevTools endpoints to pages (cloakbrowser.CheckExtraArg).
func reservedBrowserArg(arg string) string {
	name := strings.ToLower(strings.TrimLeft(arg, "-"))
	name, _, _ = strings.Cut(name, "=")
	switch {
	case strings.HasPrefix(name, "remote-debugging-"):
		return "the browser's debugging endpoints are managed by the server (Playwright's pipe; --cdp-enabled for a CDP endpoint)"
	case name == "remote-allow-origins":
		return "would let web pages drive the browser's debugger; CDP clients reach it through --cdp-enabled"
	}
	return cloakbrowser.CheckExtraArg(arg)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
