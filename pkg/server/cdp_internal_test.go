package server

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCDPRequested(t *testing.T) {
	cases := []struct {
		name   string
		params string
		def    bool
		want   bool
		err    string
	}{
		{"no params, default off", ``, false, false, ""},
		{"no params, default on", ``, true, true, ""},
		{"no _meta", `{"protocolVersion":"2025-11-25"}`, true, true, ""},
		{"bridge key on", `{"_meta":{"io.github.swimmwatch/cloakbrowser-mcp":{"cdpEnabled":true}}}`, false, true, ""},
		{"bridge key off beats --cdp-enabled", `{"_meta":{"io.github.swimmwatch/cloakbrowser-mcp":{"cdpEnabled":false}}}`, true, false, ""},
		{"own key", `{"_meta":{"io.github.cloakmcp/cloakbrowser-mcp":{"cdpEnabled":true}}}`, false, true, ""},
		{"other settings only", `{"_meta":{"io.github.swimmwatch/cloakbrowser-mcp":{"headless":false}}}`, false, false, ""},
		{"unrelated key", `{"_meta":{"com.example/x":{"cdpEnabled":true}}}`, false, false, ""},
		{"string", `{"_meta":{"io.github.swimmwatch/cloakbrowser-mcp":{"cdpEnabled":"true"}}}`, false, false, "must be true or false"},
		{"null is unset", `{"_meta":{"io.github.swimmwatch/cloakbrowser-mcp":{"cdpEnabled":null}}}`, true, true, ""},
		{"not an object", `{"_meta":{"io.github.swimmwatch/cloakbrowser-mcp":[]}}`, false, false, "must be an object"},
		{"malformed params left to mcp-go", `[1,2]`, true, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cdpRequested(json.RawMessage(tc.params), tc.def)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
