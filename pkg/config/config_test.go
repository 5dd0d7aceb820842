package config

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.json")
	if err := os.WriteFile(file, []byte(`{"outputDir":"from-file","timeouts":{"action":1000},"capabilities":["pdf"],"browser":{"launchOptions":{"headless":false}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(t *testing.T, c Config)
	}{
		{"defaults", nil, nil, func(t *testing.T, c Config) {
			if c.Transport != "stdio" || !c.Headless || c.TimeoutAction != 5*time.Second || c.HTTP.Port != 3000 || c.HTTP.SessionMax != 32 {
				t.Fatalf("%+v", c)
			}
		}},
		{"file", []string{"--config", file}, nil, func(t *testing.T, c Config) {
			if c.OutputDir != "from-file" || c.TimeoutAction != time.Second || c.Headless || c.Caps[0] != "pdf" {
				t.Fatalf("%+v", c)
			}
		}},
		{"env beats file", []string{"--config=" + file}, map[string]string{"PLAYWRIGHT_MCP_OUTPUT_DIR": "from-env"}, func(t *testing.T, c Config) {
			if c.OutputDir != "from-env" {
				t.Fatal(c.OutputDir)
			}
		}},
		{"flag beats env", []string{"--config", file, "--output-dir", "from-flag"}, map[string]string{"CLOAK_PLAYWRIGHT_MCP_OUTPUT_DIR": "from-env"}, func(t *testing.T, c Config) {
			if c.OutputDir != "from-flag" {
				t.Fatal(c.OutputDir)
			}
		}},
		{"cloak env beats playwright env", nil, map[string]string{"CLOAK_PLAYWRIGHT_MCP_OUTPUT_DIR": "a", "PLAYWRIGHT_MCP_OUTPUT_DIR": "b"}, func(t *testing.T, c Config) {
			if c.OutputDir != "a" {
				t.Fatal(c.OutputDir)
			}
		}},
		{"binary path env source", nil, map[string]string{"CLOAKBROWSER_BINARY_PATH": "/x"}, func(t *testing.T, c Config) {
			if c.BinaryPath != "/x" || c.BinaryPathSource != "env" {
				t.Fatalf("%q %q", c.BinaryPath, c.BinaryPathSource)
			}
		}},
		{"binary path flag wins", []string{"--binary-path", "/y"}, map[string]string{"CLOAKBROWSER_BINARY_PATH": "/x"}, func(t *testing.T, c Config) {
			if c.BinaryPath != "/y" || c.BinaryPathSource != "flag" {
				t.Fatalf("%q %q", c.BinaryPath, c.BinaryPathSource)
			}
		}},
		{"executable-path alias", []string{"--executable-path=/z"}, nil, func(t *testing.T, c Config) {
			if c.BinaryPath != "/z" {
				t.Fatal(c.BinaryPath)
			}
		}},
		{"port selects http", []string{"--port", "8931"}, nil, func(t *testing.T, c Config) {
			if c.Transport != TransportHTTP || c.HTTP.Port != 8931 {
				t.Fatalf("%s %d", c.Transport, c.HTTP.Port)
			}
		}},
		{"headed", []string{"--headed"}, nil, func(t *testing.T, c Config) {
			if c.Headless {
				t.Fatal("headless")
			}
		}},
		{"extra args json", []string{"--extra-args", `["--a","--b=1"]`}, nil, func(t *testing.T, c Config) {
			if strings.Join(c.ExtraArgs, " ") != "--a --b=1" {
				t.Fatal(c.ExtraArgs)
			}
		}},
		{"sandbox flags", []string{"--sandbox"}, nil, func(t *testing.T, c Config) {
			if c.SandboxOff() {
				t.Fatal("sandbox off")
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := Load(tc.args, env(tc.env), nil)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"nope":1}`), 0o600)
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"bad bool env", nil, map[string]string{"PLAYWRIGHT_MCP_HEADLESS": "maybe"}, `PLAYWRIGHT_MCP_HEADLESS="maybe"`},
		{"bad int flag", []string{"--http-port", "x"}, nil, "http-port"},
		{"unknown flag", []string{"--frobnicate"}, nil, "frobnicate"},
		{"unknown file key", []string{"--config", bad}, nil, `unknown field "nope"`},
		{"missing file", []string{"--config", filepath.Join(dir, "none.json")}, nil, "none.json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Load(tc.args, env(tc.env), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	exe, _ := os.Executable()
	cases := []struct {
		name string
		mod  func(c *Config)
		want string
	}{
		{"ok", func(c *Config) {}, ""},
		{"transport", func(c *Config) { c.Transport = "sse" }, "--transport=sse"},
		{"binary missing", func(c *Config) { c.BinaryPath = "/no/such" }, "--binary-path=/no/such: not found"},
		{"binary dir", func(c *Config) { c.BinaryPath = os.TempDir() }, "not a regular file"},
		{"binary ok", func(c *Config) { c.BinaryPath = exe }, ""},
		{"caps", func(c *Config) { c.Caps = []string{"telepathy"} }, "--caps=telepathy"},
		{"viewport", func(c *Config) { c.ViewportSize = "big" }, "--viewport-size=big"},
		{"https without cert", func(c *Config) { c.HTTP.Protocol = "https" }, "--https-cert"},
		{"public bind without auth", func(c *Config) { c.Transport = TransportHTTP; c.HTTP.Host = "0.0.0.0" }, "--http-auth-token"},
		{"public bind with auth", func(c *Config) { c.Transport = TransportHTTP; c.HTTP.Host = "0.0.0.0"; c.HTTP.AuthToken = "t" }, ""},
		{"public bind with auth tokens", func(c *Config) {
			c.Transport = TransportHTTP
			c.HTTP.Host = "0.0.0.0"
			c.HTTP.AuthTokens = []string{"a", "b"}
		}, ""},
		{"tiny body cap", func(c *Config) { c.HTTP.MaxBodyBytes = 10 }, "--http-max-body-bytes=10"},
		{"shared profile over http", func(c *Config) { c.Transport = TransportHTTP; c.UserDataDir = "/tmp/p" }, "--user-data-dir=/tmp/p"},
		{"cdp on shared browser", func(c *Config) {
			c.Transport = TransportHTTP
			c.HTTP.Isolation = "context"
			c.CDP.Enabled, c.CDP.PortRange = true, "9222"
		}, "--http-isolation=context"},
		{"endpoint reserved", func(c *Config) { c.HTTP.Endpoint = "/healthz" }, "--http-endpoint"},
		{"cdp needs range", func(c *Config) { c.CDP.Enabled = true }, "--cdp-port-range"},
		{"cdp remote", func(c *Config) { c.CDP.Enabled = true; c.CDP.PortRange = "9222"; c.CDP.Host = "10.0.0.1" }, "--cdp-allow-remote"},
		{"cdp bad range", func(c *Config) { c.CDP.Enabled = true; c.CDP.PortRange = "9230-9222" }, "--cdp-port-range=9230-9222"},
		{"cdp range checks host without enable", func(c *Config) { c.CDP.PortRange = "9222"; c.CDP.Host = "0.0.0.0"; c.CDP.AllowRemote = true }, "--cdp-advertised-host"},
		{"cdp ok", func(c *Config) { c.CDP.Enabled = true; c.CDP.PortRange = "9222-9230" }, ""},
		{"extra args debugging port", func(c *Config) { c.ExtraArgs = []string{"--remote-debugging-port=9222"} }, "--extra-args=--remote-debugging-port=9222"},
		{"extra args debugging address", func(c *Config) { c.ExtraArgs = []string{"--lang=en", "--remote-debugging-address=0.0.0.0"} }, "--extra-args=--remote-debugging-address"},
		{"extra args debugging pipe", func(c *Config) { c.ExtraArgs = []string{"--remote-debugging-pipe"} }, "managed by the server"},
		{"extra args single dash", func(c *Config) { c.ExtraArgs = []string{"-Remote-Debugging-Port=1"} }, "--extra-args=-Remote-Debugging-Port=1"},
		{"extra args allow origins", func(c *Config) { c.ExtraArgs = []string{"--remote-allow-origins=*"} }, "--extra-args=--remote-allow-origins=*"},
		{"extra args allow internal port", func(c *Config) { c.ExtraArgs = []string{"--explicitly-allowed-ports=8080,6665"} }, "port 6665 stays closed to pages"},
		{"extra args host rule onto internal port", func(c *Config) { c.ExtraArgs = []string{"--host-resolver-rules=MAP * 127.0.0.1:6000"} }, "--extra-args=--host-resolver-rules=MAP * 127.0.0.1:6000"},
		{"extra args host rules ok", func(c *Config) {
			c.ExtraArgs = []string{"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost", "--explicitly-allowed-ports=8080"}
		}, ""},
		{"extra args ok", func(c *Config) { c.ExtraArgs = []string{"--lang=de", "--disable-gpu"} }, ""},
		{"log level", func(c *Config) { c.LogLevel = "loud" }, "--log-level=loud"},
		{"image side", func(c *Config) { c.ImageMaxSide = 8 }, "--image-max-side=8"},
		{"image bytes", func(c *Config) { c.ImageMaxBytes = -1 }, "--image-max-bytes=-1"},
		{"image unbounded", func(c *Config) { c.ImageMaxSide, c.ImageMaxBytes = 0, 0 }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.mod(&c)
			err := c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// TestErrorsKeepTheirCause: the messages stay short, but the parser's or
// the file system's error is still there for errors.Is and errors.As.
func TestErrorsKeepTheirCause(t *testing.T) {
	var numErr *strconv.NumError
	var syntaxErr *json.SyntaxError
	cases := []struct {
		name string
		err  func() error
		is   func(error) bool
	}{
		{"bad int env", func() error {
			_, _, err := Load(nil, env(map[string]string{"PLAYWRIGHT_MCP_HTTP_PORT": "x"}), nil)
			return err
		}, func(err error) bool { return errors.As(err, &numErr) }},
		{"bad bool env", func() error {
			_, _, err := Load(nil, env(map[string]string{"PLAYWRIGHT_MCP_HEADLESS": "maybe"}), nil)
			return err
		}, func(err error) bool { return errors.Is(err, strconv.ErrSyntax) }},
		{"bad JSON list env", func() error {
			_, _, err := Load(nil, env(map[string]string{"PLAYWRIGHT_MCP_CAPS": "[1"}), nil)
			return err
		}, func(err error) bool { return errors.As(err, &syntaxErr) }},
		{"missing config file", func() error {
			_, _, err := Load([]string{"--config", filepath.Join(t.TempDir(), "none.json")}, env(nil), nil)
			return err
		}, func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
		{"config file not JSON", func() error {
			p := filepath.Join(t.TempDir(), "c.json")
			if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := Load([]string{"--config", p}, env(nil), nil)
			return err
		}, func(err error) bool { return err != nil && errors.Unwrap(err) != nil }},
		{"missing binary", func() error {
			c := Default()
			c.BinaryPath = filepath.Join(t.TempDir(), "none")
			return c.Validate()
		}, func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.err(); !tc.is(err) {
				t.Fatalf("err %v (%T) does not keep its cause", err, err)
			}
		})
	}
}

func TestKnownCapsIsACopy(t *testing.T) {
	k := KnownCaps()
	if len(k) == 0 {
		t.Fatal("no known caps")
	}
	k[0] = "changed"
	if KnownCaps()[0] == "changed" {
		t.Fatal("KnownCaps() aliases the accepted caps")
	}
}

// TestVisionFlag: upstream's legacy --vision adds vision to the caps,
// wherever --caps stands and whatever the environment or file say.
func TestVisionFlag(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"alone", []string{"--vision"}, nil, []string{"vision"}},
		{"before --caps", []string{"--vision", "--caps", "pdf"}, nil, []string{"pdf", "vision"}},
		{"after --caps", []string{"--caps", "pdf", "--vision"}, nil, []string{"pdf", "vision"}},
		{"with vision in --caps", []string{"--caps", "vision", "--vision"}, nil, []string{"vision"}},
		{"with the caps env", []string{"--vision"}, map[string]string{"PLAYWRIGHT_MCP_CAPS": "storage"}, []string{"storage", "vision"}},
		{"not given", []string{"--caps", "pdf"}, nil, []string{"pdf"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := Load(tc.args, func(k string) string { return tc.env[k] }, nil)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(c.Caps, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("caps %v, want %v", c.Caps, tc.want)
			}
			if err := c.Validate(); err != nil {
				t.Fatalf("validate: %v", err)
			}
		})
	}
}
