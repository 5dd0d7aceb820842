package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/textdist"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// setting is one configuration knob: its flags, env vars and how a string
// value is applied.
type setting struct {
	flags  []string // first is the canonical name
	env    []string
	help   string
	isBool bool
	// multi settings may repeat on the command line (and take several
	// values after one flag, as upstream's variadic options): their values
	// add up, replacing what the file and environment set.
	multi bool
	reset func(c *Config) // clears a multi setting before its first flag
	set   func(c *Config, v string) error
}

// valueError says what a setting's value should have been, keeping the
// parser's error (a *strconv.NumError, a *json.SyntaxError, …) as its cause:
// the message stays short, errors.Is/As still see why.
type valueError struct {
	want string
	err  error
}

func (e *valueError) Error() string { return e.want }

func (e *valueError) Unwrap() error { return e.err }

func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, &valueError{"not a boolean", err}
	}
	return b, nil
}

func str(p func(c *Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *p(c) = v; return nil }
}

func boolean(p func(c *Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := parseBool(v)
		if err != nil {
			return err
		}
		*p(c) = b
		return nil
	}
}

func integer(p func(c *Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return &valueError{"not an integer", err}
		}
		*p(c) = n
		return nil
	}
}

func millis(p func(c *Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return &valueError{"not a non-negative number of milliseconds", err}
		}
		*p(c) = time.Duration(n) * time.Millisecond
		return nil
	}
}

// list splits CSV or a JSON array.
func list(p func(c *Config) *[]string) func(*Config, string) error {
	return func(c *Config, v string) error {
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "[") {
			var arr []string
			if err := json.Unmarshal([]byte(v), &arr); err != nil {
				return &valueError{"not a JSON array of strings", err}
			}
			*p(c) = arr
			return nil
		}
		var out []string
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		*p(c) = out
		return nil
	}
}

func envs(name string) []string {
	return []string{"CLOAK_PLAYWRIGHT_MCP_" + name, "PLAYWRIGHT_MCP_" + name}
}

// settings are every option: this server's own, then the drop-in ones.
var settings = append(coreSettings, dropinSettings...)

var coreSettings = []setting{
	{flags: []string{"transport"}, env: envs("TRANSPORT"), help: "stdio or streamable-http", set: func(c *Config, v string) error { c.Transport = v; return nil }},
	{flags: []string{"config"}, env: envs("CONFIG"), help: "JSON config file (@playwright/mcp's keys plus this server's)", set: func(c *Config, v string) error { return nil }},
	{flags: []string{"binary-path", "executable-path"}, env: append([]string{"CLOAKBROWSER_BINARY_PATH"}, envs("EXECUTABLE_PATH")...), help: "browser binary to launch (skips CloakBrowser resolution)", set: str(func(c *Config) *string { return &c.BinaryPath })},
	{flags: []string{"no-download"}, env: envs("NO_DOWNLOAD"), isBool: true, help: "never download CloakBrowser; use the cache or a system Chromium", set: boolean(func(c *Config) *bool { return &c.NoDownload })},
	{flags: []string{"headless"}, env: envs("HEADLESS"), isBool: true, help: "run the browser headless (default true)", set: boolean(func(c *Config) *bool { return &c.Headless })},
	{flags: []string{"headed"}, isBool: true, help: "run the browser with a window", set: func(c *Config, v string) error {
		b, err := parseBool(v)
		c.Headless = !b
		return err
	}},
	{flags: []string{"no-sandbox"}, env: envs("NO_SANDBOX"), isBool: true, help: "pass --no-sandbox (default: on when root)", set: func(c *Config, v string) error {
		b, err := parseBool(v)
		c.NoSandbox = &b
		return err
	}},
	{flags: []string{"sandbox"}, env: envs("SANDBOX"), isBool: true, help: "keep Chromium's sandbox on", set: func(c *Config, v string) error {
		b, err := parseBool(v)
		nb := !b
		c.NoSandbox = &nb
		return err
	}},
	{flags: []string{"user-data-dir"}, env: envs("USER_DATA_DIR"), help: "persistent browser profile (default: a temporary one per browser)", set: str(func(c *Config) *string { return &c.UserDataDir })},
	{flags: []string{"isolated"}, env: envs("ISOLATED"), isBool: true, help: "in-memory profile (the default unless --user-data-dir)", set: boolean(func(c *Config) *bool { return &c.Isolated })},
	{flags: []string{"extra-args"}, env: envs("EXTRA_ARGS"), help: "extra browser arguments, CSV or JSON array", set: list(func(c *Config) *[]string { return &c.ExtraArgs })},
	{flags: []string{"fingerprint-seed"}, env: envs("FINGERPRINT_SEED"), help: "CloakBrowser --fingerprint seed (default random)", set: integer(func(c *Config) *int { return &c.FingerprintSeed })},
	{flags: []string{"viewport-size"}, env: envs("VIEWPORT_SIZE"), help: "viewport WIDTHxHEIGHT, e.g. 1280x720", set: str(func(c *Config) *string { return &c.ViewportSize })},
	{flags: []string{"driver-dir"}, env: append(envs("DRIVER_DIR"), "PLAYWRIGHT_DRIVER_PATH"), help: "Playwright driver directory", set: str(func(c *Config) *string { return &c.DriverDir })},
	{flags: []string{"ffmpeg-path"}, env: envs("FFMPEG_PATH"), help: "ffmpeg that records video (default: ffmpeg on PATH)", set: str(func(c *Config) *string { return &c.FFmpegPath })},
	{flags: []string{"node-path"}, env: []string{"PLAYWRIGHT_NODEJS_PATH"}, help: "Node.js (>= 20) that runs the Playwright driver (default: node on PATH)", set: str(func(c *Config) *string { return &c.NodePath })},
	{flags: []string{"no-auto-install"}, env: envs("NO_AUTO_INSTALL"), isBool: true, help: "do not install a missing Playwright driver at start", set: boolean(func(c *Config) *bool { return &c.NoAutoInstall })},
	{flags: []string{"caps"}, env: envs("CAPS"), help: "extra capability groups, comma-separated: " + strings.Join(knownCaps, ","), set: list(func(c *Config) *[]string { return &c.Caps })},
	{flags: []string{"vision"}, isBool: true, help: "legacy, as upstream's hidden --vision: the same as adding vision to --caps", set: boolean(func(c *Config) *bool { return &c.Vision })},
	{flags: []string{"output-dir"}, env: envs("OUTPUT_DIR"), help: "directory for screenshots, downloads, traces (default .playwright-mcp)", set: str(func(c *Config) *string { return &c.OutputDir })},
	{flags: []string{"allow-unrestricted-file-access"}, env: envs("ALLOW_UNRESTRICTED_FILE_ACCESS"), isBool: true, help: "allow file: URLs and uploads from any path", set: boolean(func(c *Config) *bool { return &c.AllowUnrestrictedFileAccess })},
	{flags: []string{"timeout-action"}, env: envs("TIMEOUT_ACTION"), help: "action timeout in ms (default 5000)", set: millis(func(c *Config) *time.Duration { return &c.TimeoutAction })},
	{flags: []string{"timeout-navigation"}, env: envs("TIMEOUT_NAVIGATION"), help: "navigation timeout in ms (default 60000)", set: millis(func(c *Config) *time.Duration { return &c.TimeoutNavigation })},
	{flags: []string{"max-download-bytes"}, env: envs("MAX_DOWNLOAD_BYTES"), help: "bytes all of one session's downloads may take in the output dir (default 268435456)", set: func(c *Config, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return &valueError{"not an integer", err}
		}
		c.MaxDownloadBytes = n
		return nil
	}},
	{flags: []string{"max-downloads"}, env: envs("MAX_DOWNLOADS"), help: "downloads one session may start (default 100)", set: integer(func(c *Config) *int { return &c.MaxDownloads })},
	{flags: []string{"max-tabs"}, env: envs("MAX_TABS"), help: "tabs one session may have open, its pages' popups included (default 32)", set: integer(func(c *Config) *int { return &c.MaxTabs })},
	{flags: []string{"max-concurrent-calls"}, env: envs("MAX_CONCURRENT_CALLS"), help: "tool calls one session may have in flight; one more is refused as busy (default 8)", set: integer(func(c *Config) *int { return &c.MaxConcurrentCalls })},
	{flags: []string{"log-level"}, env: envs("LOG_LEVEL"), help: "debug, info, warn or error (logs go to stderr)", set: str(func(c *Config) *string { return &c.LogLevel })},

	{flags: []string{"http-host", "host"}, env: envs("HTTP_HOST"), help: "HTTP bind address (default 127.0.0.1)", set: str(func(c *Config) *string { return &c.HTTP.Host })},
	{flags: []string{"http-port", "port"}, env: envs("HTTP_PORT"), help: "HTTP port (default 3000); --port alone selects streamable-http", set: integer(func(c *Config) *int { return &c.HTTP.Port })},
	{flags: []string{"http-endpoint"}, env: envs("HTTP_ENDPOINT"), help: "MCP endpoint path (default /mcp)", set: str(func(c *Config) *string { return &c.HTTP.Endpoint })},
	{flags: []string{"http-auth-token"}, env: envs("HTTP_AUTH_TOKEN"), help: "require this Bearer token", set: str(func(c *Config) *string { return &c.HTTP.AuthToken })},
	{flags: []string{"http-auth-tokens"}, env: envs("HTTP_AUTH_TOKENS"), help: "more accepted Bearer tokens, CSV or JSON array; each token is a principal that sees only its own sessions", set: list(func(c *Config) *[]string { return &c.HTTP.AuthTokens })},
	{flags: []string{"http-max-body-bytes"}, env: envs("HTTP_MAX_BODY_BYTES"), help: "largest accepted request body (default 4194304)", set: func(c *Config, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return &valueError{"not an integer", err}
		}
		c.HTTP.MaxBodyBytes = n
		return nil
	}},
	{flags: []string{"http-protocol"}, env: envs("HTTP_PROTOCOL"), help: "http or https", set: str(func(c *Config) *string { return &c.HTTP.Protocol })},
	{flags: []string{"https-cert"}, env: envs("HTTPS_CERT"), help: "TLS certificate (PEM) for https", set: str(func(c *Config) *string { return &c.HTTP.CertFile })},
	{flags: []string{"https-key"}, env: envs("HTTPS_KEY"), help: "TLS key (PEM) for https", set: str(func(c *Config) *string { return &c.HTTP.KeyFile })},
	{flags: []string{"http-session-max"}, env: envs("HTTP_SESSION_MAX"), help: "maximum concurrent sessions (default 32)", set: integer(func(c *Config) *int { return &c.HTTP.SessionMax })},
	{flags: []string{"http-session-max-per-principal"}, env: envs("HTTP_SESSION_MAX_PER_PRINCIPAL"), help: "maximum concurrent sessions of one auth token (default 0: only --http-session-max)", set: integer(func(c *Config) *int { return &c.HTTP.SessionMaxPerPrincipal })},
	{flags: []string{"http-session-idle-ttl-ms"}, env: envs("HTTP_SESSION_IDLE_TTL_MS"), help: "close sessions idle this long (default 3600000)", set: millis(func(c *Config) *time.Duration { return &c.HTTP.SessionIdleTTL })},
	{flags: []string{"http-session-backend"}, env: envs("HTTP_SESSION_BACKEND"), help: "session metadata backend: memory or redis", set: str(func(c *Config) *string { return &c.HTTP.SessionBackend })},
	{flags: []string{"redis-url"}, env: envs("REDIS_URL"), help: "Redis URL for the redis session backend", set: str(func(c *Config) *string { return &c.HTTP.RedisURL })},
	{flags: []string{"redis-key-prefix"}, env: envs("REDIS_KEY_PREFIX"), help: "prefix of every Redis key the fleet writes (default cloakbrowser-mcp:)", set: str(func(c *Config) *string { return &c.HTTP.RedisKeyPrefix })},
	{flags: []string{"cluster-secret"}, env: envs("CLUSTER_SECRET"), help: "shared secret instances of a fleet authenticate forwarded requests with (redis backend)", set: str(func(c *Config) *string { return &c.HTTP.ClusterSecret })},
	{flags: []string{"cluster-advertise-url"}, env: envs("CLUSTER_ADVERTISE_URL"), help: "base URL other fleet instances reach this one at (default: the listen address)", set: str(func(c *Config) *string { return &c.HTTP.ClusterAdvertiseURL })},
	{flags: []string{"cluster-heartbeat-ttl-ms"}, env: envs("CLUSTER_HEARTBEAT_TTL_MS"), help: "an instance whose heartbeat is this old is dead; its sessions answer 404 (default 5000)", set: millis(func(c *Config) *time.Duration { return &c.HTTP.ClusterHeartbeatTTL })},
	{flags: []string{"browser-endpoint-pool"}, env: envs("BROWSER_ENDPOINT_POOL"), help: "remote browsers HTTP sessions attach to (least-loaded first), comma-separated ws:// Playwright servers or http:// CDP endpoints", set: list(func(c *Config) *[]string { return &c.HTTP.BrowserEndpointPool })},
	{flags: []string{"allowed-hosts"}, env: envs("ALLOWED_HOSTS"), multi: true, reset: func(c *Config) { c.HTTP.AllowedHosts = nil }, help: "extra accepted Host header values, comma-separated", set: appendTo(func(c *Config) *[]string { return &c.HTTP.AllowedHosts }, true)},
	{flags: []string{"allowed-origins-http"}, env: envs("HTTP_ALLOWED_ORIGINS"), help: "accepted Origin header values, comma-separated", set: list(func(c *Config) *[]string { return &c.HTTP.AllowedOrigins })},
	{flags: []string{"http-allow-non-loopback"}, env: envs("HTTP_ALLOW_NON_LOOPBACK"), isBool: true, help: "allow a non-loopback bind without an auth token", set: boolean(func(c *Config) *bool { return &c.HTTP.AllowNonLoopback })},
	{flags: []string{"http-isolation"}, env: envs("HTTP_ISOLATION"), help: "per-session isolation: browser (own browser process and temp profile; default) or context (own context in one shared browser)", set: str(func(c *Config) *string { return &c.HTTP.Isolation })},

	{flags: []string{"cdp-enabled"}, env: envs("CDP_ENABLED"), isBool: true, help: "publish a leased CDP proxy to the session's browser", set: boolean(func(c *Config) *bool { return &c.CDP.Enabled })},
	{flags: []string{"cdp-port-range"}, env: envs("CDP_PORT_RANGE"), help: "CDP proxy ports, e.g. 9222 or 9222-9230", set: str(func(c *Config) *string { return &c.CDP.PortRange })},
	{flags: []string{"cdp-host"}, env: envs("CDP_HOST"), help: "CDP proxy bind address (default 127.0.0.1)", set: str(func(c *Config) *string { return &c.CDP.Host })},
	{flags: []string{"cdp-allow-remote"}, env: envs("CDP_ALLOW_REMOTE"), isBool: true, help: "allow a non-loopback CDP bind", set: boolean(func(c *Config) *bool { return &c.CDP.AllowRemote })},
	{flags: []string{"cdp-advertised-host"}, env: envs("CDP_ADVERTISED_HOST"), help: "host name put in published CDP URLs", set: str(func(c *Config) *string { return &c.CDP.AdvertisedHost })},
	{flags: []string{"cdp-advertised-scheme"}, env: envs("CDP_ADVERTISED_SCHEME"), help: "http or https in published CDP URLs", set: str(func(c *Config) *string { return &c.CDP.AdvertisedScheme })},

	// Snapshot economy (issue 18): what navigation and action responses show.
	{flags: []string{"image-max-side"}, env: envs("IMAGE_MAX_SIDE"), help: "longest side in pixels of an image an answer carries; a larger screenshot is sent scaled down, its scale stated, the file kept full size (default 1568; 0: no bound)", set: integer(func(c *Config) *int { return &c.ImageMaxSide })},
	{flags: []string{"image-max-bytes"}, env: envs("IMAGE_MAX_BYTES"), help: "largest image an answer carries, in bytes; a larger one is sent as JPEG, smaller if need be (default 819200; 0: no bound)", set: integer(func(c *Config) *int { return &c.ImageMaxBytes })},
	{flags: []string{"snapshot-mode"}, env: envs("SNAPSHOT_MODE"), help: "what responses show of the page: outline (default: small pages whole, large ones outlined; actions show a diff), inline (whole page up to 40000 chars), full (the whole page in a linked file, as upstream) or none", set: str(func(c *Config) *string { return &c.SnapshotMode })},
}

type flagValue struct {
	s      *setting
	c      *Config
	seen   map[string]bool
	failed *error
	isBool bool
}

func (f flagValue) String() string   { return "" }
func (f flagValue) IsBoolFlag() bool { return f.isBool }
func (f flagValue) Set(v string) error {
	name := f.s.flags[0]
	if f.s.multi && !f.seen[name] && f.s.reset != nil {
		f.s.reset(f.c)
	}
	f.seen[name] = true
	if err := f.s.set(f.c, v); err != nil {
		if *f.failed == nil {
			*f.failed = settingErr("--"+name, v, err)
		}
		return err
	}
	return nil
}

// settingErr is a bad value of a setting: the name, the value (quoted,
// shortened) and what is accepted.
func settingErr(name, v string, err error) error {
	var ve *valueError
	if errors.As(err, &ve) {
		return &settingError{setting: name, value: quote(v), why: ve.want, err: ve.err}
	}
	return &settingError{setting: name, value: quote(v), why: err.Error(), err: err}
}

// UnknownFlagError is a command-line flag no setting has.
type UnknownFlagError struct {
	Flag    string // as given, without dashes
	Suggest string // the closest known flag, or ""
}

func (e *UnknownFlagError) Error() string {
	if e.Suggest != "" {
		return fmt.Sprintf("unknown flag --%s; did you mean --%s?", e.Flag, e.Suggest)
	}
	return fmt.Sprintf("unknown flag --%s; run --help for the flags", e.Flag)
}

// FlagNames returns every flag name the command line accepts.
func FlagNames() []string {
	var out []string
	for _, s := range settings {
		out = append(out, s.flags...)
	}
	return out
}

func suggest(name string) string {
	best, bestD := "", 4
	for _, f := range FlagNames() {
		d := textdist.Levenshtein(name, f)
		if strings.HasPrefix(f, name) && len(name) >= 3 {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = f, d
		}
	}
	if bestD > max(1, len(name)/3) {
		return ""
	}
	return best
}

// expandVariadic turns upstream's variadic form "--init-script a.js b.js"
// into "--init-script a.js --init-script b.js" for multi settings.
func expandVariadic(args []string) []string {
	multi := map[string]bool{}
	for _, s := range settings {
		if s.multi {
			for _, f := range s.flags {
				multi[f] = true
			}
		}
	}
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		out = append(out, a)
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		name := strings.TrimLeft(a, "-")
		if !strings.HasPrefix(a, "-") || strings.Contains(name, "=") || !multi[name] || i+1 >= len(args) {
			continue
		}
		out = append(out, args[i+1])
		i++
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			out = append(out, a, args[i+1])
			i++
		}
	}
	return out
}

// Load builds the configuration from defaults, the config file (--config or
// its env var), the environment, then args (flags, not the program name).
// It returns the remaining positional arguments.
func Load(args []string, getenv func(string) string, usage io.Writer) (Config, []string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c := Default()

	// Find --config first: the file is the lowest layer.
	path := getenv("CLOAK_PLAYWRIGHT_MCP_CONFIG")
	if path == "" {
		path = getenv("PLAYWRIGHT_MCP_CONFIG")
	}
	for i, a := range args {
		if a == "--config" || a == "-config" {
			if i+1 < len(args) {
				path = args[i+1]
			}
		} else if v, ok := strings.CutPrefix(a, "--config="); ok {
			path = v
		}
	}
	if path != "" {
		if err := loadFile(&c, path); err != nil {
			return c, nil, err
		}
	}

	for i := range settings {
		s := &settings[i]
		for _, e := range s.env {
			if v := getenv(e); v != "" {
				if err := s.set(&c, v); err != nil {
					return c, nil, settingErr(e, v, err)
				}
				if s.flags[0] == "binary-path" {
					c.BinaryPathSource = "env"
				}
				break
			}
		}
	}

	seen := map[string]bool{}
	var failed error
	fs := flag.NewFlagSet("cloakbrowser-mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for i := range settings {
		s := &settings[i]
		for _, name := range s.flags {
			fs.Var(flagValue{s: s, c: &c, seen: seen, failed: &failed, isBool: s.isBool}, name, s.help)
		}
	}
	if err := fs.Parse(expandVariadic(args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if usage != nil {
				PrintUsage(usage)
			}
			return c, nil, err
		}
		if failed != nil {
			return c, nil, failed
		}
		if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: "); ok {
			name = strings.TrimLeft(name, "-")
			return c, nil, &UnknownFlagError{Flag: name, Suggest: suggest(name)}
		}
		if name, ok := strings.CutPrefix(err.Error(), "flag needs an argument: "); ok {
			return c, nil, fmt.Errorf("--%s needs a value (run --help for the flags)", strings.TrimLeft(name, "-"))
		}
		return c, nil, err
	}
	if seen["binary-path"] {
		c.BinaryPathSource = "flag"
	}
	if c.Vision && !slices.Contains(c.Caps, "vision") {
		c.Caps = append(c.Caps, "vision")
	}
	// Upstream's --port alone means "serve over HTTP".
	if seen["http-port"] && !seen["transport"] && getenv("CLOAK_PLAYWRIGHT_MCP_TRANSPORT") == "" {
		c.Transport = TransportHTTP
	}
	return c, fs.Args(), nil
}

// PrintUsage writes every flag with its env vars and help.
func PrintUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: cloakbrowser-mcp [command] [flags]

Commands:
  serve                   serve MCP (the default; stdio unless --transport/--port)
  install [--driver-only] install the Playwright driver and CloakBrowser
                          (--driver-only: the driver alone;
                          --require-cloakbrowser: exit 1 without CloakBrowser
                          even when a system Chromium would serve)
  doctor [--json] [--no-launch]
                          check the setup (--json: machine-readable;
                          --no-launch: do not launch a browser)
  smoke [flags] FILE...   run smoke scenarios (see: help smoke)
  version, --version, -V  print the version
  help [COMMAND], --help, -h
                          print this help, or a command's
`)
	PrintFlags(w)
}

// PrintFlags writes every flag with its env vars and help, under a heading.
func PrintFlags(w io.Writer) {
	fmt.Fprintln(w, "Flags (every command; precedence: config file < environment < flags):")
	for _, s := range settings {
		names := make([]string, len(s.flags))
		for i, f := range s.flags {
			names[i] = "--" + f
		}
		val := " <value>"
		if s.isBool {
			val = ""
		}
		fmt.Fprintf(w, "  %s%s\n      %s\n", strings.Join(names, ", "), val, s.help)
		if len(s.env) > 0 {
			fmt.Fprintf(w, "      env: %s\n", strings.Join(s.env, ", "))
		}
	}
}

// fileConfig is the JSON config file: @playwright/mcp's keys (config.d.ts
// of 0.0.83) plus this server's own. Unknown keys are refused.
type fileConfig struct {
	Browser *struct {
		BrowserName    string            `json:"browserName"`
		Isolated       *bool             `json:"isolated"`
		UserDataDir    string            `json:"userDataDir"`
		LaunchOptions  json.RawMessage   `json:"launchOptions"`
		ContextOptions json.RawMessage   `json:"contextOptions"`
		CDPEndpoint    string            `json:"cdpEndpoint"`
		CDPHeaders     map[string]string `json:"cdpHeaders"`
		CDPTimeout     *int64            `json:"cdpTimeout"`
		RemoteEndpoint json.RawMessage   `json:"remoteEndpoint"`
		RemoteHeaders  map[string]string `json:"remoteHeaders"`
		InitPage       []string          `json:"initPage"`
		InitScript     []string          `json:"initScript"`
	} `json:"browser"`
	Extension *bool `json:"extension"`
	Server    *struct {
		Port         *int     `json:"port"`
		Host         string   `json:"host"`
		AllowedHosts []string `json:"allowedHosts"`
	} `json:"server"`
	Capabilities                []string          `json:"capabilities"`
	SaveSession                 *bool             `json:"saveSession"`
	WebMCP                      *bool             `json:"webmcp"`
	SharedBrowserContext        *bool             `json:"sharedBrowserContext"`
	Secrets                     map[string]string `json:"secrets"`
	OutputDir                   string            `json:"outputDir"`
	OutputMaxSize               *int64            `json:"outputMaxSize"`
	AllowUnrestrictedFileAccess *bool             `json:"allowUnrestrictedFileAccess"`
	Console                     *struct {
		Level string `json:"level"`
	} `json:"console"`
	Network *struct {
		AllowedOrigins []string `json:"allowedOrigins"`
		BlockedOrigins []string `json:"blockedOrigins"`
	} `json:"network"`
	TestIDAttribute string `json:"testIdAttribute"`
	Timeouts        *struct {
		Action     *int64 `json:"action"`
		Navigation *int64 `json:"navigation"`
		Expect     *int64 `json:"expect"`
		Settle     *int64 `json:"settle"`
		Idle       *int64 `json:"idle"`
	} `json:"timeouts"`
	ImageResponses string `json:"imageResponses"`
	FilePaths      string `json:"filePaths"`
	Snapshot       *struct {
		Mode  string `json:"mode"`
		Boxes *bool  `json:"boxes"`
	} `json:"snapshot"`
	Codegen string `json:"codegen"`

	Transport string `json:"transport"`
	LogLevel  string `json:"logLevel"`
	CDP       *struct {
		Enabled   *bool  `json:"enabled"`
		PortRange string `json:"portRange"`
		Host      string `json:"host"`
	} `json:"cdp"`
	HTTP *struct {
		SessionMax             *int `json:"sessionMax"`
		SessionMaxPerPrincipal *int `json:"sessionMaxPerPrincipal"`
	} `json:"http"`
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func loadFile(c *Config, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--config=%s: %w", quote(path), err)
	}
	b = []byte(strings.TrimPrefix(string(b), "\uFEFF"))
	var f fileConfig
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("--config=%s: %w", quote(path), jsonError("", b, err))
	}
	if err := applyFile(c, f, filepath.Dir(path)); err != nil {
		return fmt.Errorf("--config=%s: %w", quote(path), err)
	}
	return nil
}

func applyFile(c *Config, f fileConfig, dir string) error {
	// Paths of init scripts and pages are relative to the file, as upstream.
	rel := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	if br := f.Browser; br != nil {
		if br.BrowserName != "" {
			c.Browser = br.BrowserName
		}
		if br.Isolated != nil {
			c.Isolated = *br.Isolated
		}
		if br.UserDataDir != "" {
			c.UserDataDir = br.UserDataDir
		}
		if len(br.LaunchOptions) > 0 {
			if err := applyLaunchJSON(c, br.LaunchOptions); err != nil {
				return err
			}
		}
		if len(br.ContextOptions) > 0 {
			if err := applyContextJSON(c, br.ContextOptions); err != nil {
				return fmt.Errorf("browser.contextOptions: %w", err)
			}
		}
		if br.CDPEndpoint != "" {
			c.CDPEndpoint = br.CDPEndpoint
		}
		if br.CDPHeaders != nil {
			c.CDPHeaders = br.CDPHeaders
		}
		if br.CDPTimeout != nil {
			c.CDPTimeout = ms(*br.CDPTimeout)
		}
		if len(br.RemoteEndpoint) > 0 {
			var ep string
			if err := json.Unmarshal(br.RemoteEndpoint, &ep); err != nil {
				var o struct {
					Endpoint string            `json:"endpoint"`
					Headers  map[string]string `json:"headers"`
					Timeout  *int64            `json:"timeout"`
				}
				if err := json.Unmarshal(br.RemoteEndpoint, &o); err != nil {
					return fmt.Errorf("browser.remoteEndpoint must be a URL or {endpoint, headers, timeout}: %w", err)
				}
				ep = o.Endpoint
				if o.Headers != nil {
					c.EndpointHeaders = o.Headers
				}
				if o.Timeout != nil {
					c.CDPTimeout = ms(*o.Timeout)
				}
			}
			c.Endpoint = ep
		}
		if br.RemoteHeaders != nil {
			c.EndpointHeaders = br.RemoteHeaders
		}
		for _, p := range br.InitPage {
			c.InitPage = append(c.InitPage, rel(p))
		}
		for _, p := range br.InitScript {
			c.InitScripts = append(c.InitScripts, rel(p))
		}
	}
	if f.Extension != nil {
		c.Extension = *f.Extension
	}
	if s := f.Server; s != nil {
		if s.Port != nil {
			c.HTTP.Port = *s.Port
			c.Transport = TransportHTTP
		}
		if s.Host != "" {
			c.HTTP.Host = s.Host
		}
		c.HTTP.AllowedHosts = append(c.HTTP.AllowedHosts, s.AllowedHosts...)
	}
	if len(f.Capabilities) > 0 {
		c.Caps = f.Capabilities
	}
	if f.SaveSession != nil {
		c.SaveSession = *f.SaveSession
	}
	if f.WebMCP != nil {
		c.NoWebMCP = !*f.WebMCP
	}
	if f.SharedBrowserContext != nil {
		c.SharedBrowserContext = *f.SharedBrowserContext
	}
	if f.Secrets != nil {
		c.Secrets = f.Secrets
	}
	if f.OutputDir != "" {
		c.OutputDir = f.OutputDir
	}
	if f.OutputMaxSize != nil {
		c.OutputMaxSize = *f.OutputMaxSize
	}
	if f.AllowUnrestrictedFileAccess != nil {
		c.AllowUnrestrictedFileAccess = *f.AllowUnrestrictedFileAccess
	}
	if f.Console != nil && f.Console.Level != "" {
		c.ConsoleLevel = f.Console.Level
	}
	if n := f.Network; n != nil {
		if n.AllowedOrigins != nil {
			c.AllowedOrigins = n.AllowedOrigins
		}
		if n.BlockedOrigins != nil {
			c.BlockedOrigins = n.BlockedOrigins
		}
	}
	if f.TestIDAttribute != "" {
		c.TestIDAttribute = f.TestIDAttribute
	}
	if t := f.Timeouts; t != nil {
		if t.Action != nil {
			c.TimeoutAction = ms(*t.Action)
		}
		if t.Navigation != nil {
			c.TimeoutNavigation = ms(*t.Navigation)
		}
		if t.Expect != nil {
			c.TimeoutExpect = ms(*t.Expect)
		}
		if t.Settle != nil {
			c.TimeoutSettle = ms(*t.Settle)
		}
		if t.Idle != nil {
			d := ms(*t.Idle)
			c.IdleTimeout = &d
		}
	}
	if f.ImageResponses != "" {
		c.ImageResponses = f.ImageResponses
	}
	if f.FilePaths != "" {
		c.FilePaths = f.FilePaths
	}
	if sn := f.Snapshot; sn != nil {
		if sn.Mode != "" {
			c.SnapshotMode = sn.Mode
		}
		if sn.Boxes != nil {
			c.SnapshotBoxes = *sn.Boxes
		}
	}
	if f.Codegen != "" {
		c.Codegen = f.Codegen
	}
	if f.Transport != "" {
		c.Transport = f.Transport
	}
	if f.LogLevel != "" {
		c.LogLevel = f.LogLevel
	}
	if h := f.HTTP; h != nil {
		if h.SessionMax != nil {
			c.HTTP.SessionMax = *h.SessionMax
		}
		if h.SessionMaxPerPrincipal != nil {
			c.HTTP.SessionMaxPerPrincipal = *h.SessionMaxPerPrincipal
		}
	}
	if cd := f.CDP; cd != nil {
		if cd.Enabled != nil {
			c.CDP.Enabled = *cd.Enabled
		}
		if cd.PortRange != "" {
			c.CDP.PortRange = cd.PortRange
		}
		if cd.Host != "" {
			c.CDP.Host = cd.Host
		}
	}
	return nil
}
