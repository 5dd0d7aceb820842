package smoke_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
)

// debianNode is the nodejs major version each Debian release ships (the
// driver needs 20 or newer): an image that installs nodejs with apt gets
// that one.
var debianNode = map[string]int{"bullseye": 12, "bookworm": 18, "trixie": 20}

// snippet is a CI job's shell lines and environment, as its file has them.
type snippet struct {
	file  string
	lines []string
	env   map[string]string
	// node is the Node.js major version the job runs (0: unknown).
	node int
}

func readSnippets(t *testing.T) []snippet {
	t.Helper()
	var gh struct {
		Jobs map[string]struct {
			Steps []struct {
				Uses string            `yaml:"uses"`
				With map[string]any    `yaml:"with"`
				Run  string            `yaml:"run"`
				Env  map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	mustYAML(t, "../../examples/smoke/github-actions.yml", &gh)
	var out []snippet
	for _, job := range gh.Jobs {
		s := snippet{file: "github-actions.yml", env: map[string]string{}}
		for _, st := range job.Steps {
			if strings.HasPrefix(st.Uses, "actions/setup-node@") {
				s.node, _ = strconv.Atoi(strings.Split(fmt.Sprint(st.With["node-version"]), ".")[0])
			}
			for k, v := range st.Env {
				s.env[k] = v
			}
			for _, l := range strings.Split(st.Run, "\n") {
				if l = strings.TrimSpace(l); l != "" {
					s.lines = append(s.lines, l)
				}
			}
		}
		out = append(out, s)
	}
	var gl map[string]struct {
		Image        string            `yaml:"image"`
		Variables    map[string]string `yaml:"variables"`
		BeforeScript []string          `yaml:"before_script"`
		Script       []string          `yaml:"script"`
	}
	mustYAML(t, "../../examples/smoke/gitlab-ci.yml", &gl)
	for _, job := range gl {
		s := snippet{file: "gitlab-ci.yml", env: job.Variables, lines: append(job.BeforeScript, job.Script...)}
		if m := regexp.MustCompile(`-(bullseye|bookworm|trixie)$`).FindStringSubmatch(job.Image); m != nil {
			s.node = debianNode[m[1]]
		}
		out = append(out, s)
	}
	if len(out) != 2 {
		t.Fatalf("want one job in each CI file, got %d", len(out))
	}
	return out
}

func mustYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestCISnippetsAreSound checks what can be checked without running them:
// each job gets a Node.js the driver accepts, installs the server the way
// that works today (not the unpublished module path) and runs files that
// exist.
func TestCISnippetsAreSound(t *testing.T) {
	for _, s := range readSnippets(t) {
		if s.node < 20 {
			t.Errorf("%s: the job's Node.js is %d; the Playwright driver needs 20 or newer (Debian: %v)", s.file, s.node, debianNode)
		}
		joined := strings.Join(s.lines, "\n")
		if strings.Contains(joined, "@latest") {
			t.Errorf("%s: go install …@latest fails until a version is released; install from the checkout", s.file)
		}
		for _, want := range []string{"go install ./cmd/cloakbrowser-mcp", "cloakbrowser-mcp install --driver-only", "cloakbrowser-mcp smoke"} {
			if !strings.Contains(joined, want) {
				t.Errorf("%s: no %q line", s.file, want)
			}
		}
		if m, _ := filepath.Glob("../../examples/smoke/*.yaml"); len(m) == 0 {
			t.Errorf("%s: examples/smoke/*.yaml matches nothing", s.file)
		}
	}
}

// TestCISnippetsRunAsWritten runs each CI job's shell lines as written, in a
// checkout of this repository (its root), with the job's environment: the
// go install, the driver install and the smoke run with its JUnit report.
// Lines that install Debian packages are not run (they need root and the
// network; .ci/deps installs the same packages here). GitLab's
// $CI_PROJECT_DIR is a temp dir whose driver cache is the installed driver.
func TestCISnippetsRunAsWritten(t *testing.T) {
	mcptest.Chromium(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	drv := driver.Options{}.Resolved().Dir
	for _, s := range readSnippets(t) {
		t.Run(s.file, func(t *testing.T) {
			gobin, project := t.TempDir(), t.TempDir()
			if err := os.MkdirAll(filepath.Join(project, ".cache"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(drv, filepath.Join(project, ".cache", "playwright-driver")); err != nil {
				t.Fatal(err)
			}
			env := append(os.Environ(), "GOBIN="+gobin, "PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"), "CI_PROJECT_DIR="+project)
			for k, v := range s.env {
				env = append(env, k+"="+os.Expand(v, func(k string) string {
					if k == "CI_PROJECT_DIR" {
						return project
					}
					return os.Getenv(k)
				}))
			}
			t.Cleanup(func() {
				_ = os.Remove(filepath.Join(root, "smoke-junit.xml"))
				_ = os.RemoveAll(filepath.Join(root, "smoke-artifacts"))
			})
			ran := 0
			for _, l := range s.lines {
				if strings.Contains(l, "apt-get") {
					continue
				}
				cmd := exec.CommandContext(t.Context(), "sh", "-ec", l)
				cmd.Dir, cmd.Env = root, env
				start := time.Now()
				out, err := cmd.CombinedOutput()
				t.Logf("%s: %q: %.1fs", s.file, l, time.Since(start).Seconds())
				if err != nil {
					t.Fatalf("%s: %q: %v\n%s", s.file, l, err, mcptest.Tail(string(out), 4000))
				}
				ran++
			}
			junit, err := os.ReadFile(filepath.Join(root, "smoke-junit.xml"))
			if err != nil || !strings.Contains(string(junit), "<testsuite") || strings.Contains(string(junit), "<failure") {
				t.Fatalf("%s: the JUnit report: %v\n%.2000s", s.file, err, junit)
			}
			if ran < 3 {
				t.Fatalf("%s: ran %d lines", s.file, ran)
			}
		})
	}
}
