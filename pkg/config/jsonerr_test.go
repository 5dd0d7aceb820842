package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigFileTypeErrors: a config file with a value of the wrong type
// names the key, the type it takes and the value, never a Go type dump.
func TestConfigFileTypeErrors(t *testing.T) {
	long := strings.Repeat("y", 5000)
	for _, c := range []struct {
		name, json, want string
	}{
		{"object given a string", `{"browser": "chromium"}`, `key "browser" must be an object, got string "chromium"`},
		{"boolean given a string", `{"browser": {"isolated": "yes"}}`, `key "browser.isolated" must be a boolean (true or false), got string "yes"`},
		{"array given a string", `{"capabilities": "storage,pdf"}`, `key "capabilities" must be an array of strings, got string "storage,pdf"`},
		{"array item", `{"capabilities": ["pdf", 7]}`, `key "capabilities": each item must be a string, got number 7`},
		{"whole number given a fraction", `{"timeouts": {"action": 1.5}}`, `key "timeouts.action" must be a whole number, got number 1.5`},
		{"number given a string", `{"timeouts": {"navigation": "60s"}}`, `key "timeouts.navigation" must be a whole number, got string "60s"`},
		{"object given an array", `{"server": [8931]}`, `key "server" must be an object, got an array`},
		{"map of strings", `{"secrets": {"A": 1}}`, `key "secrets.A" must be a string, got number 1`},
		{"long value", `{"outputDir": 1, "browser": {"userDataDir": ["` + long + `"]}}`, `key "outputDir" must be a string, got number 1`},
		{"long string value", `{"browser": {"isolated": "` + long + `"}}`, `got string "` + strings.Repeat("y", 100) + `…" (5000 chars)`},
		{"context options", `{"browser": {"contextOptions": {"viewport": {"width": "wide"}}}}`, `browser.contextOptions: key "viewport.width" must be a whole number, got string "wide"`},
		{"launch options", `{"browser": {"launchOptions": {"headless": "no"}}}`, `key "browser.launchOptions.headless" must be a boolean (true or false), got string "no"`},
		{"syntax", "{\n  \"browser\": {,}\n}", `not valid JSON at line 2, column`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "config.json")
			if err := os.WriteFile(p, []byte(c.json), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := Load([]string{"--config", p}, env(nil), nil)
			if err == nil {
				t.Fatal("Load accepted the file")
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) {
				t.Fatalf("error %q\nwant it to contain %q", msg, c.want)
			}
			for _, bad := range []string{"Go struct", "Go value", "json:\"", "struct {", "unmarshal"} {
				if strings.Contains(msg, bad) {
					t.Errorf("error shows Go internals (%q): %s", bad, msg)
				}
			}
			if len(msg) > 600 {
				t.Errorf("error is %d characters", len(msg))
			}
		})
	}
}
