package codegen

import "testing"

// TestFormatObject holds FormatObject, Number and JSON to what
// Playwright's formatObject, String(number) and JSON.stringify print
// (the expected strings are node's output).
func TestFormatObject(t *testing.T) {
	cases := []struct {
		name, got, want string
	}{
		{"empty", FormatObject(Object{}, false), "{}"},
		{"omitted and timeout left out", FormatObject(Object{"button": Omitted, "timeout": 5000.0}, false), "{}"},
		{"sorted multi-line", FormatObject(Object{"type": "png", "path": "a'b.png", "fullPage": true, "quality": 90}, false),
			"{\n  fullPage: true,\n  path: 'a\\'b.png',\n  quality: 90,\n  type: 'png'\n}"},
		{"one line with null", FormatObject(Object{"colorScheme": "dark", "reducedMotion": nil}, true), "{ colorScheme: 'dark', reducedMotion: null }"},
		{"nested stays multi-line unindented", FormatObject(Object{"data": map[string]string{"text/plain": "hi"}}, false),
			"{\n  data: {\n  text/plain: 'hi'\n}\n}"},
		{"array", FormatObject(Object{"files": []string{"/a", "/b"}}, false), "{\n  files: ['/a', '/b']\n}"},
		{"options void", FormatOptions(Object{"button": Omitted}), ""},
		{"integer", Number(300), "300"},
		{"fraction", Number(20.5), "20.5"},
		{"negative", Number(-0.25), "-0.25"},
		{"small", Number(1e-7), "1e-7"},
		{"small mantissa", Number(1.5e-7), "1.5e-7"},
		{"large", Number(1e21), "1e+21"},
		{"below large", Number(123456789012345680000), "123456789012345680000"},
		{"json string", JSON("a\"b\\c\n<&>\u2028"), "\"a\\\"b\\\\c\\n<&>\u2028\""},
		{"json paths", JSON([]string{"/tmp/a b.txt"}), `["/tmp/a b.txt"]`},
		{"json fields in order", Fields{{"name", "n"}, {"value", "v"}, {"expires", Omitted}, {"httpOnly", true}, {"expires2", 4102444800.0}}.JSON(),
			`{"name":"n","value":"v","httpOnly":true,"expires2":4102444800}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Fatalf("got  %q\nwant %q", tc.got, tc.want)
			}
		})
	}
}

func TestAssertSnapshot(t *testing.T) {
	a := Action{Name: "assertSnapshot", Selector: "body", AriaSnapshot: "- list:\n  - listitem: \"A`${x}\""}
	cases := map[Language]string{
		TypeScript: "await expect(page.locator('body')).toMatchAriaSnapshot(`\n  - list:\n    - listitem: \"A\\`\\${x}\"\n  `);",
		Python:     `expect(page.locator("body")).to_match_aria_snapshot("- list:\n  - listitem: \"A` + "`" + `${x}\"")`,
		Java:       `assertThat(page.locator("body")).matchesAriaSnapshot("- list:\n  - listitem: \"A` + "`" + `${x}\"");`,
		CSharp:     `await Expect(page.Locator("body")).ToMatchAriaSnapshotAsync("- list:\n  - listitem: \"A` + "`" + `${x}\"");`,
	}
	for lang, want := range cases {
		if got := a.render(lang); got != want {
			t.Errorf("%s:\n got %s\nwant %s", lang, got, want)
		}
	}
}

func TestIsFunction(t *testing.T) {
	cases := map[string]bool{
		"() => document.title":            true,
		"(el) => el.value":                true,
		"async () => { await 1 }":         true,
		"async (a, b) => a":               true,
		"x => x * 2":                      true,
		"async x => x":                    true,
		"function () { return 1 }":        true,
		"async function f() {}":           true,
		"(() => 1)":                       true,
		"((a = ')') => a)":                true,
		"(1 + 2)":                         false,
		"document.title":                  false,
		"functionName()":                  false,
		"1":                               false,
		"(a) + (b)":                       false,
		"({ a: 1 })":                      false,
		"(/* ) */ a) => a":                true,
		"asyncThing":                      false,
		"  \n () =>\n 1":                  true,
		"[1, 2].map(x => x)":              false,
		"`${() => 1}`":                    false,
		"(a, `)`, b) => a":                true,
		"(function () { return this })()": false,
		"(function () { return this })":   true,
		"new Promise(r => setTimeout(r))": false,
	}
	for expr, want := range cases {
		if got := IsFunction(expr); got != want {
			t.Errorf("IsFunction(%q) = %v, want %v", expr, got, want)
		}
	}
}
