package driver

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

// TestDriverRunsWithNodeFlags starts the real driver and reads the flags
// its node process got from /proc: the defaults, an override through
// NodeFlagsEnv, none, and a bad value that fails with a clear error before
// anything starts.
func TestDriverRunsWithNodeFlags(t *testing.T) {
	testtier.BrowserTier(t)
	t.Setenv("PLAYWRIGHT_NODEJS_PATH", nodeFromEnv)
	if _, err := os.Stat(Options{}.Resolved().CLIPath()); err != nil {
		t.Fatalf("driver not installed (run `go run ./cmd/cloakbrowser-mcp install --driver-only`): %v", err)
	}
	defaults := strings.Fields(DefaultNodeFlags)
	cases := []struct {
		name    string
		env     *string // nil: unset
		lean    bool
		want    []string
		notWant []string
		err     string
	}{
		{name: "defaults", want: defaults, notWant: []string{LeanHeapFlag}},
		{name: "lean", lean: true, want: append(slices.Clone(defaults), LeanHeapFlag)},
		{name: "override beats lean", lean: true, env: ptr("--max-lazy"), want: []string{"--max-lazy"}, notWant: []string{LeanHeapFlag, "--max-semi-space-size=1"}},
		{name: "override", env: ptr("--max-old-space-size=200  --stack-trace-limit=5"), want: []string{"--max-old-space-size=200", "--stack-trace-limit=5"}, notWant: defaults},
		{name: "none", env: ptr(""), notWant: defaults},
		{name: "not a flag", env: ptr("--max-lazy max-semi-space-size=1"), err: `CLOAKBROWSER_MCP_DRIVER_NODE_FLAGS: "max-semi-space-size=1" is not a node flag`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// t.Setenv first, so the variable is restored after the case.
			t.Setenv(NodeFlagsEnv, "")
			if tc.env == nil {
				os.Unsetenv(NodeFlagsEnv)
			} else {
				os.Setenv(NodeFlagsEnv, *tc.env)
			}
			d := Start(Options{LeanHeap: tc.lean}, false)
			defer d.Close()
			_, err := d.Get(t.Context())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "unset it for the defaults") {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			args := procArgs(t, d.Pid())
			if !strings.HasSuffix(args[0], "node") || !slices.Contains(args, "run-driver") {
				t.Fatalf("pid %d is not the driver's node: %q", d.Pid(), args)
			}
			// Flags come before the script, where node reads them.
			script := slices.IndexFunc(args, func(a string) bool { return strings.HasSuffix(a, "cli.js") })
			for _, f := range tc.want {
				if i := slices.Index(args, f); i < 0 || i > script {
					t.Errorf("node args %q lack %s before the script", args, f)
				}
			}
			for _, f := range tc.notWant {
				if slices.Contains(args, f) {
					t.Errorf("node args %q hold %s", args, f)
				}
			}
			env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", d.Pid()))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(env), driverArgsEnv) {
				t.Errorf("%s reached node", driverArgsEnv)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func procArgs(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(errors.Join(fmt.Errorf("driver pid %d", pid), err))
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

func TestNodeOptionsFlags(t *testing.T) {
	got := nodeOptionsFlags([]string{"--max-semi-space-size=1", "--max-lazy", "--optimize-for-size", "--max-old-space-size=300"})
	if want := []string{"--max-semi-space-size=1", "--max-old-space-size=300"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
