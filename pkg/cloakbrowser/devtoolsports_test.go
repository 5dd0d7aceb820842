package cloakbrowser

import (
	"slices"
	"strings"
	"testing"
)

func TestInternalDevToolsPorts(t *testing.T) {
	seen := map[int]bool{}
	for i, tier := range InternalDevToolsPorts() {
		for _, p := range tier {
			if seen[p] {
				t.Errorf("port %d listed twice", p)
			}
			seen[p] = true
			// Enterprise policy (ExplicitlyAllowedNetworkPorts) may allow these again.
			if slices.Contains([]int{554, 989, 990, 6566, 10080}, p) {
				t.Errorf("port %d can be allowed again by policy", p)
			}
			if i == 0 && p < 1024 {
				t.Errorf("first tier has privileged port %d", p)
			}
			if !IsInternalDevToolsPort(p) {
				t.Errorf("IsInternalDevToolsPort(%d) = false", p)
			}
		}
	}
	for _, p := range []int{0, 80, 443, 554, 6566, 9222, 10080, 65535} {
		if IsInternalDevToolsPort(p) {
			t.Errorf("IsInternalDevToolsPort(%d) = true", p)
		}
	}
	InternalDevToolsPorts()[0][0] = 1 // a copy
	if InternalDevToolsPorts()[0][0] != 1719 {
		t.Fatal("InternalDevToolsPorts returned its table")
	}
}

func TestCheckExtraArg(t *testing.T) {
	for _, tc := range []struct {
		name, arg, want string
	}{
		{"allowed ports, one internal", "--explicitly-allowed-ports=8080,6665", "port 6665 stays closed to pages"},
		{"allowed ports, single dash", "-explicitly-allowed-ports=6000", "port 6000 stays closed"},
		{"allowed ports, upper case, spaces", "--Explicitly-Allowed-Ports= 2049 ", "port 2049 stays closed"},
		{"allowed ports, none internal", "--explicitly-allowed-ports=8080,10080", ""},
		{"host rule onto an internal port", "--host-resolver-rules=MAP example.com 127.0.0.1:6666", `rule "MAP example.com 127.0.0.1:6666" maps onto a port`},
		{"host rule onto an internal port, IPv6", "--host-resolver-rules=EXCLUDE a, map * [::1]:06697", `rule "map * [::1]:06697"`},
		{"legacy host rules", "--host-rules=MAP *:80 localhost:5060", `rule "MAP *:80 localhost:5060"`},
		{"host rule keeping the port", "--host-resolver-rules=MAP * 127.0.0.1, EXCLUDE localhost", ""},
		{"host rule onto another port", "--host-resolver-rules=MAP *:6665 127.0.0.1:8080", ""},
		{"not found rule", "--host-resolver-rules=MAP *:6665 ~NOTFOUND", ""},
		{"other switch", "--lang=de", ""},
		{"not a switch", "6665", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckExtraArg(tc.arg)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("CheckExtraArg(%q) = %q; want %q", tc.arg, got, tc.want)
			}
		})
	}
}

func TestLaunchArgsKeepPagesOffInternalPorts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra []string
		want  []string // present
		not   []string // absent (as prefixes)
	}{
		{"internal ports taken out of the allowed list", []string{"--explicitly-allowed-ports=8080, 6665,6000,9000"},
			[]string{"--explicitly-allowed-ports=8080,9000"}, nil},
		{"allowed list of internal ports only is dropped", []string{"-explicitly-allowed-ports=6665"},
			nil, []string{"-explicitly-allowed-ports", "--explicitly-allowed-ports"}},
		{"other allowed ports kept as given", []string{"--explicitly-allowed-ports=10080"},
			[]string{"--explicitly-allowed-ports=10080"}, nil},
		{"host rules merged: the rule onto an internal port out, the rest kept",
			[]string{"--host-resolver-rules=MAP a.test 127.0.0.1:8080, MAP b.test 127.0.0.1:6667,EXCLUDE localhost"},
			[]string{"--host-resolver-rules=MAP a.test 127.0.0.1:8080,EXCLUDE localhost"}, nil},
		{"host rules untouched", []string{"--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"},
			[]string{"--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"}, nil},
		{"legacy host rules onto internal ports only are dropped", []string{"--host-rules=MAP * 127.0.0.1:1719"},
			nil, []string{"--host-rules"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := LaunchArgs(BinaryInfo{Engine: EngineChromium}, LaunchOptions{ExtraArgs: tc.extra})
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("LaunchArgs = %q; want %q in it", got, w)
				}
			}
			for _, n := range tc.not {
				for _, a := range got {
					if strings.HasPrefix(a, n) {
						t.Errorf("LaunchArgs has %q", a)
					}
				}
			}
		})
	}
}
