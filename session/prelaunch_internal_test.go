package session

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
)

// TestPrelaunchKeyOmitsPerSessionChoices: two sessions of one server pick
// their own fingerprint seed and window, and run in their own profiles;
// their prelaunches name one record (the same key) and differ only in the
// values of the placeholders, which cover every argument they chose. A
// change of options (headless, an argument of the user's) is another key.
func TestPrelaunchKeyOmitsPerSessionChoices(t *testing.T) {
	bin := cloakbrowser.BinaryInfo{BinaryPath: "/opt/cloak/chrome", Engine: cloakbrowser.EngineCloak}
	base := Config{Headless: true, ExtraArgs: []string{"--lang=de"}}
	var seeds, key []string
	for i := range 12 {
		c := base.withWindow()
		args := c.Args(bin)
		p := c.prelaunch(bin, args, "/tmp/profile-"+string(rune('a'+i)))
		if i == 0 {
			key = p.Key
		} else if !slices.Equal(p.Key, key) {
			t.Fatalf("session %d key\n%q\nwant\n%q", i, p.Key, key)
		}
		if p.Vars[prelaunchProfile] != "/tmp/profile-"+string(rune('a'+i)) || p.Command != bin.BinaryPath {
			t.Fatalf("prelaunch = %+v", p)
		}
		// What the record keeps is the key; every chosen value is a
		// placeholder there.
		for _, a := range args {
			chosen := strings.HasPrefix(a, "--fingerprint=") || cloakbrowser.IsWindowArg(a)
			if chosen == slices.Contains(p.Key, a) {
				t.Errorf("argument %q: chosen per session %v, yet in the key %v", a, chosen, !chosen)
			}
			if chosen && !slices.Contains(slices.Collect(maps.Values(p.Vars)), a) {
				t.Errorf("argument %q chosen per session has no placeholder", a)
			}
		}
		for _, v := range p.Vars {
			if strings.HasPrefix(v, "--fingerprint=") {
				seeds = append(seeds, v)
			}
		}
	}
	if len(seeds) != 12 || len(slices.Compact(slices.Sorted(slices.Values(seeds)))) < 2 {
		t.Fatalf("want 12 seeds, not all the same: %q", seeds)
	}
	if !slices.Contains(key, "--lang=de") {
		t.Fatalf("the user's argument is not in the key %q", key)
	}
	headed := base
	headed.Headless = false
	if p := headed.withWindow().prelaunch(bin, headed.Args(bin), "/tmp/p"); slices.Equal(p.Key, key) {
		t.Fatal("a headed launch has the key of a headless one")
	}
}
