package embed_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// buildToolModules are module path prefixes that come only with build
// tooling (go-task's graph). An importer of embed must never inherit them.
var buildToolModules = []string{
	"github.com/aws/", "cloud.google.com/", "google.golang.org/grpc", "charm.land/",
	"github.com/go-task/", "github.com/charmbracelet/", "go.opentelemetry.io/",
}

// forbidden returns the lines of `go list -m all` output naming a build-tool
// module.
func forbidden(list string) []string {
	var bad []string
	for _, line := range strings.Split(list, "\n") {
		path, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		for _, p := range buildToolModules {
			if strings.HasPrefix(path, p) {
				bad = append(bad, line)
				break
			}
		}
	}
	return bad
}

func TestForbiddenModules(t *testing.T) {
	cases := []struct {
		name, list string
		bad        int
	}{
		{"server graph", "github.com/cloakmcp/cloakbrowser-mcp v0.0.0\ngithub.com/mark3labs/mcp-go v1.2.1\ngolang.org/x/sys v0.48.0", 0},
		{"aws sdk", "github.com/aws/aws-sdk-go-v2 v1.44.0", 1},
		{"google cloud and grpc", "cloud.google.com/go v0.123.0\ngoogle.golang.org/grpc v1.84.0", 2},
		{"charm", "charm.land/bubbletea/v2 v2.0.10 => ./x", 1},
		{"go-task", "github.com/go-task/task/v3 v3.54.0", 1},
		{"a prefix is not a substring", "example.com/github.com/aws/x v1.0.0", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := forbidden(tc.list); len(got) != tc.bad {
				t.Errorf("forbidden = %q, want %d lines", got, tc.bad)
			}
		})
	}
}

// TestFreshImporterModuleGraph is the cost of importing embed: a new module
// outside the repository that requires ours (replace to this checkout) and
// imports pkg/embed and pkg/smoke must not list any build-tool module.
func TestFreshImporterModuleGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	_, file, _, _ := runtime.Caller(0)
	repo, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/importer\n\ngo 1.26\n\nrequire github.com/cloakmcp/cloakbrowser-mcp v0.0.0\n\nreplace github.com/cloakmcp/cloakbrowser-mcp => "+repo+"\n")
	write("main.go", `package main

import (
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/embed"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/smoke"
)

func main() { _, _ = embed.Start, smoke.Run }
`)
	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	goCmd("mod", "tidy")
	list := goCmd("list", "-m", "all")
	t.Logf("%d modules in an importer's graph", strings.Count(strings.TrimSpace(list), "\n")+1)
	if bad := forbidden(list); len(bad) > 0 {
		t.Errorf("importing embed pulls build-tool modules (is go-task back in go.mod? it belongs in tools.mod):\n%s", strings.Join(bad, "\n"))
	}
	// The importer builds (a build, not vet: vet would compute its facts
	// for every package of the graph again, 9 s of a quiet machine against
	// the build's 1.4 s, which finds the compiled packages in the cache).
	goCmd("build", "-o", os.DevNull, ".")
}
