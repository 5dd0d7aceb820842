package config

import "testing"

// TestWebMCPEnabled: WebMCP page tools need --caps webmcp; upstream's ways
// to turn them off win over the cap.
func TestWebMCPEnabled(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want bool
	}{
		{"default", nil, nil, false},
		{"cap", []string{"--caps", "webmcp"}, nil, true},
		{"cap among others", []string{"--caps", "storage,webmcp"}, nil, true},
		{"cap and --no-webmcp", []string{"--caps", "webmcp", "--no-webmcp"}, nil, false},
		{"cap and --webmcp=false", []string{"--caps", "webmcp", "--webmcp=false"}, nil, false},
		{"cap and the env off", []string{"--caps", "webmcp"}, map[string]string{"PLAYWRIGHT_MCP_WEBMCP": "false"}, false},
		{"--webmcp alone", []string{"--webmcp"}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := Load(tc.args, env(tc.env), nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := c.WebMCPEnabled(); got != tc.want {
				t.Fatalf("WebMCPEnabled = %v, want %v", got, tc.want)
			}
		})
	}
}
