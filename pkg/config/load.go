package config

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
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
	set    func(c *Config, v string) error
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

var settings = []setting{
	{flags: []string{"transport"}, env: envs("TRANSPORT"), help: "stdio or streamable-http", set: func(c *Config, v string) error { c.Transport = v; return nil }},
	{flags: []string{"config"}, env: envs("CONFIG"), help: "JSON config file (a subset of @playwright/mcp's keys plus this server's)", set: func(c *Config, v string) error { return nil }},
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
	{flags: []string{"node-path"}, env: []string{"PLAYWRIGHT_NODEJS_PATH"}, help: "Node.js (>= 20) that runs the Playwright driver (default: node on PATH)", set: str(func(c *Config) *string { return &c.NodePath })},
	{flags: []string{"no-auto-install"}, env: envs("NO_AUTO_INSTALL"), isBool: true, help: "do not install a missing Playwright driver at start", set: boolean(func(c *Config) *bool { return &c.NoAutoInstall })},
	{flags: []string{"caps"}, env: envs("CAPS"), help: "extra capability groups, comma-separated: " + strings.Join(KnownCaps, ","), set: list(func(c *Config) *[]string { return &c.Caps })},
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
	{flags: []string{"http-session-idle-ttl-ms"}, env: envs("HTTP_SESSION_IDLE_TTL_MS"), help: "close sessions idle this long (default 3600000)", set: millis(func(c *Config) *time.Duration { return &c.HTTP.SessionIdleTTL })},
	{flags: []string{"http-session-backend"}, env: envs("HTTP_SESSION_BACKEND"), help: "session metadata backend: memory or redis", set: str(func(c *Config) *string { return &c.HTTP.SessionBackend })},
	{flags: []string{"redis-url"}, env: envs("REDIS_URL"), help: "Redis URL for the redis session backend", set: str(func(c *Config) *string { return &c.HTTP.RedisURL })},
	{flags: []string{"allowed-hosts"}, env: envs("ALLOWED_HOSTS"), help: "extra accepted Host header values, comma-separated", set: list(func(c *Config) *[]string { return &c.HTTP.AllowedHosts })},
	{flags: []string{"allowed-origins-http"}, env: envs("HTTP_ALLOWED_ORIGINS"), help: "accepted Origin header values, comma-separated", set: list(func(c *Config) *[]string { return &c.HTTP.AllowedOrigins })},
	{flags: []string{"http-allow-non-loopback"}, env: envs("HTTP_ALLOW_NON_LOOPBACK"), isBool: true, help: "allow a non-loopback bind without an auth token", set: boolean(func(c *Config) *bool { return &c.HTTP.AllowNonLoopback })},
	{flags: []string{"http-isolation"}, env: envs("HTTP_ISOLATION"), help: "per-session isolation: browser (own browser process and temp profile; default) or context (own context in one shared browser)", set: str(func(c *Config) *string { return &c.HTTP.Isolation })},

	{flags: []string{"cdp-enabled"}, env: envs("CDP_ENABLED"), isBool: true, help: "publish a leased CDP proxy to the session's browser", set: boolean(func(c *Config) *bool { return &c.CDP.Enabled })},
	{flags: []string{"cdp-port-range"}, env: envs("CDP_PORT_RANGE"), help: "CDP proxy ports, e.g. 9222 or 9222-9230", set: str(func(c *Config) *string { return &c.CDP.PortRange })},
	{flags: []string{"cdp-host"}, env: envs("CDP_HOST"), help: "CDP proxy bind address (default 127.0.0.1)", set: str(func(c *Config) *string { return &c.CDP.Host })},
	{flags: []string{"cdp-allow-remote"}, env: envs("CDP_ALLOW_REMOTE"), isBool: true, help: "allow a non-loopback CDP bind", set: boolean(func(c *Config) *bool { return &c.CDP.AllowRemote })},
	{flags: []string{"cdp-advertised-host"}, env: envs("CDP_ADVERTISED_HOST"), help: "host name put in published CDP URLs", set: str(func(c *Config) *string { return &c.CDP.AdvertisedHost })},
	{flags: []string{"cdp-advertised-scheme"}, env: envs("CDP_ADVERTISED_SCHEME"), help: "http or https in published CDP URLs", set: str(func(c *Config) *string { return &c.CDP.AdvertisedScheme })},
}

type flagValue struct {
	s      *setting
	c      *Config
	seen   *map[string]bool
	isBool bool
}

func (f flagValue) String() string   { return "" }
func (f flagValue) IsBoolFlag() bool { return f.isBool }
func (f flagValue) Set(v string) error {
	(*f.seen)[f.s.flags[0]] = true
	return f.s.set(f.c, v)
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
					return c, nil, fmt.Errorf("%s=%q: %w", e, v, err)
				}
				if s.flags[0] == "binary-path" {
					c.BinaryPathSource = "env"
				}
				break
			}
		}
	}

	seen := map[string]bool{}
	fs := flag.NewFlagSet("cloakbrowser-mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for i := range settings {
		s := &settings[i]
		for _, name := range s.flags {
			fs.Var(flagValue{s: s, c: &c, seen: &seen, isBool: s.isBool}, name, s.help)
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if usage != nil {
				PrintUsage(usage)
			}
			return c, nil, err
		}
		return c, nil, err
	}
	if seen["binary-path"] {
		c.BinaryPathSource = "flag"
	}
	// Upstream's --port alone means "serve over HTTP".
	if seen["http-port"] && !seen["transport"] && getenv("CLOAK_PLAYWRIGHT_MCP_TRANSPORT") == "" {
		c.Transport = TransportHTTP
	}
	return c, fs.Args(), nil
}

// PrintUsage writes every flag with its env vars and help.
func PrintUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: cloakbrowser-mcp [serve|install|doctor [--json]|version] [flags]")
	fmt.Fprintln(w, "\nFlags (precedence: config file < environment < flags):")
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

// fileConfig is the JSON config file: a subset of @playwright/mcp's keys plus
// this server's own.
type fileConfig struct {
	Browser *struct {
		Isolated      *bool  `json:"isolated"`
		UserDataDir   string `json:"userDataDir"`
		LaunchOptions *struct {
			ExecutablePath  string   `json:"executablePath"`
			Headless        *bool    `json:"headless"`
			Args            []string `json:"args"`
			ChromiumSandbox *bool    `json:"chromiumSandbox"`
		} `json:"launchOptions"`
		ContextOptions *struct {
			Viewport *struct {
				Width  int `json:"width"`
				Height int `json:"height"`
			} `json:"viewport"`
		} `json:"contextOptions"`
	} `json:"browser"`
	Server *struct {
		Port         *int     `json:"port"`
		Host         string   `json:"host"`
		AllowedHosts []string `json:"allowedHosts"`
	} `json:"server"`
	Capabilities                []string `json:"capabilities"`
	OutputDir                   string   `json:"outputDir"`
	AllowUnrestrictedFileAccess *bool    `json:"allowUnrestrictedFileAccess"`
	Timeouts                    *struct {
		Action     *int64 `json:"action"`
		Navigation *int64 `json:"navigation"`
	} `json:"timeouts"`
	Transport string `json:"transport"`
	LogLevel  string `json:"logLevel"`
	CDP       *struct {
		Enabled   *bool  `json:"enabled"`
		PortRange string `json:"portRange"`
		Host      string `json:"host"`
	} `json:"cdp"`
}

func loadFile(c *Config, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--config=%s: %w", path, err)
	}
	var f fileConfig
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("--config=%s: %w", path, err)
	}
	if br := f.Browser; br != nil {
		if br.Isolated != nil {
			c.Isolated = *br.Isolated
		}
		if br.UserDataDir != "" {
			c.UserDataDir = br.UserDataDir
		}
		if lo := br.LaunchOptions; lo != nil {
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
		}
		if co := br.ContextOptions; co != nil && co.Viewport != nil {
			c.ViewportSize = fmt.Sprintf("%dx%d", co.Viewport.Width, co.Viewport.Height)
		}
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
	if f.OutputDir != "" {
		c.OutputDir = f.OutputDir
	}
	if f.AllowUnrestrictedFileAccess != nil {
		c.AllowUnrestrictedFileAccess = *f.AllowUnrestrictedFileAccess
	}
	if t := f.Timeouts; t != nil {
		if t.Action != nil {
			c.TimeoutAction = time.Duration(*t.Action) * time.Millisecond
		}
		if t.Navigation != nil {
			c.TimeoutNavigation = time.Duration(*t.Navigation) * time.Millisecond
		}
	}
	if f.Transport != "" {
		c.Transport = f.Transport
	}
	if f.LogLevel != "" {
		c.LogLevel = f.LogLevel
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
