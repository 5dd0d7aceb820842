package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/httpguard"
)

// filesPage serves a page with a file input, a drop zone, a download link,
// a console message and a request, for the file-taking tools.
func filesPage(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Files</title>
<input type="file" id="file" aria-label="Upload">
<div id="drop" ondragover="event.preventDefault()" style="width:200px;height:80px;border:1px solid">Drop here</div>
<a href="/report.csv" id="dl">Report</a>
<script>console.log("hello files"); fetch("/ping");
document.cookie = "sid=secret-of-a; path=/";</script>`)
	})
	mux.HandleFunc("/ping", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "pong") })
	mux.HandleFunc("/report.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
		fmt.Fprint(w, "a,b\n1,2\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}

// emptyDir fails the test when dir holds anything but keep.
func emptyDir(t *testing.T, dir, what string, keep ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !contains(keep, e.Name()) {
			t.Fatalf("%s: %s was created outside the output directory", what, filepath.Join(dir, e.Name()))
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestFileToolsConfined: every tool that writes or reads a file refuses a
// traversal, an absolute path outside, a symlink planted in the output
// directory that leads out, and a directory swapped for such a symlink
// between two calls; nothing is created outside and no outside file reaches
// the page.
func TestFileToolsConfined(t *testing.T) {
	c, out := inProcess(t, "--caps", "storage,pdf,devtools,downloads,interactions,vision")
	base := filesPage(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("outside secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, c, "browser_navigate", map[string]any{"url": base + "/"}, "Files")
	// A valid state file, so set_storage_state fails only for its path.
	must(t, c, "browser_storage_state", map[string]any{"filename": "valid-state.json"}, "Storage state")
	state, err := os.ReadFile(filepath.Join(out, "valid-state.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(outside, "state.json"), state, 0o644)
	if err := os.Symlink(outside, filepath.Join(out, "evil")); err != nil {
		t.Fatal(err)
	}

	type tool struct {
		name string
		// args builds the call's arguments for a file name or path.
		args func(name string) map[string]any
		// before prepares each call (a trace to stop, a chooser to answer).
		before func(t *testing.T)
		// reads: the tool reads the file (absolute paths only for uploads).
		reads, absolute bool
		ext             string
	}
	named := func(extra map[string]any) func(string) map[string]any {
		return func(name string) map[string]any {
			m := map[string]any{"filename": name}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
	}
	uploads := func(extra map[string]any) func(string) map[string]any {
		return func(p string) map[string]any {
			m := map[string]any{"paths": []any{p}}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
	}
	tools := []tool{
		{name: "browser_take_screenshot", args: named(nil), ext: ".png"},
		{name: "browser_take_labeled_screenshot", args: named(nil), ext: ".png"},
		{name: "browser_snapshot", args: named(nil), ext: ".yml"},
		{name: "browser_pdf_save", args: named(nil), ext: ".pdf"},
		{name: "browser_storage_state", args: named(nil), ext: ".json"},
		{name: "browser_console_messages", args: named(map[string]any{"level": "info"}), ext: ".log"},
		{name: "browser_network_requests", args: named(map[string]any{"static": true}), ext: ".log"},
		{name: "browser_evaluate", args: named(map[string]any{"function": "() => 42"}), ext: ".json"},
		{name: "browser_find", args: named(map[string]any{"text": "Drop"}), ext: ".yml"},
		{name: "browser_download", args: named(map[string]any{"url": base + "/report.csv"}), ext: ".csv"},
		{name: "browser_stop_tracing", args: named(nil), ext: ".zip", before: func(t *testing.T) {
			must(t, c, "browser_start_tracing", nil, "Tracing started")
		}},
		{name: "browser_set_storage_state", args: named(nil), reads: true, ext: ".json"},
		{name: "browser_set_input_files", args: uploads(map[string]any{"target": "#file"}), reads: true, absolute: true, ext: ".txt"},
		{name: "browser_drop", args: uploads(map[string]any{"target": "#drop"}), reads: true, absolute: true, ext: ".txt"},
		{name: "browser_file_upload", args: uploads(nil), reads: true, absolute: true, ext: ".txt", before: func(t *testing.T) {
			must(t, c, "browser_click", map[string]any{"target": "#file"}, "Modal state")
		}},
		// Last: its accepted call arms the next chooser.
		{name: "browser_arm_file_chooser", args: uploads(nil), reads: true, absolute: true, ext: ".txt"},
	}
	// after cleans up a refused call's state (a trace still running, a
	// chooser still open).
	after := func(t *testing.T, tl tool) {
		switch tl.name {
		case "browser_stop_tracing":
			// Still running when the name was refused up front; stopped
			// when the copy into the directory was.
			c.Call(t, "browser_stop_tracing", nil)
		case "browser_file_upload":
			must(t, c, "browser_file_upload", map[string]any{"paths": []any{}}, "Cancelled")
		}
	}

	keep := []string{"secret.txt", "state.json"} // planted outside by the test
	for i, tl := range tools {
		t.Run(tl.name, func(t *testing.T) {
			sub := fmt.Sprintf("d%d", i)
			name := func(rel string) string {
				if tl.absolute {
					return filepath.Join(out, rel)
				}
				return rel
			}
			// A file the readers accept, copied into the output directory.
			okFile := "ok" + tl.ext
			content := []byte("inside")
			if tl.name == "browser_set_storage_state" {
				content = state
			}
			plant := func(rel string) {
				p := filepath.Join(out, rel)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, content, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// The outside twin of every name, for the readers: reading
			// it would be the leak.
			os.WriteFile(filepath.Join(outside, okFile), content, 0o644)
			os.WriteFile(filepath.Join(outside, "x"+tl.ext), content, 0o644)
			keep = append(keep, okFile, "x"+tl.ext)

			refused := func(what, arg string) {
				t.Helper()
				if tl.before != nil {
					tl.before(t)
				}
				res := c.Call(t, tl.name, tl.args(arg))
				if !res.IsError {
					t.Fatalf("%s %s: accepted %q:\n%s", tl.name, what, arg, mcptest.Text(res))
				}
				after(t, tl)
				emptyDir(t, outside, what, keep...)
			}
			accepted := func(arg string) {
				t.Helper()
				if tl.before != nil {
					tl.before(t)
				}
				if _, err := c.TryCall(tl.name, tl.args(arg)); err != nil {
					t.Fatal(err)
				}
			}

			// Traversal.
			trav := "../x" + tl.ext
			if tl.absolute || tl.reads {
				// out/../../…/outside/x: absolute, but through out.
				up := strings.Repeat("../", strings.Count(out, "/"))
				trav = out + "/" + up + strings.TrimPrefix(outside, "/") + "/x" + tl.ext
				if !tl.absolute {
					trav = up + strings.TrimPrefix(outside, "/") + "/x" + tl.ext
				}
			}
			refused("traversal", trav)
			if _, err := os.Stat(filepath.Join(filepath.Dir(out), "x"+tl.ext)); err == nil {
				t.Fatal("traversal: a file was created next to the output directory")
			}
			// Absolute path outside.
			refused("absolute outside", filepath.Join(outside, "x"+tl.ext))
			// A planted symlink that leads out.
			refused("symlink out", name(filepath.Join("evil", "x"+tl.ext)))
			// A directory component swapped for a symlink between calls.
			if tl.reads {
				plant(filepath.Join(sub, okFile))
			}
			accepted(name(filepath.Join(sub, okFile)))
			if err := os.RemoveAll(filepath.Join(out, sub)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(out, sub)); err != nil {
				t.Fatal(err)
			}
			refused("symlink swap", name(filepath.Join(sub, okFile)))
			if got, _ := os.ReadFile(filepath.Join(outside, okFile)); string(got) != string(content) {
				t.Fatalf("symlink swap: the outside file was overwritten")
			}
		})
	}
}

// TestFilesPerPrincipal: with bearer tokens each principal's files live in
// <output-dir>/<principal>/; token B cannot restore token A's storage state
// (by name or by path), upload it, or overwrite A's screenshot.
func TestFilesPerPrincipal(t *testing.T) {
	p := twoPrincipals(t, "--caps", "storage,interactions")
	a, b, out, dirA, dirB := p.a, p.b, p.out, p.dirA, p.dirB
	base := filesPage(t)

	must(t, a.Client, "browser_navigate", map[string]any{"url": base + "/"}, "Files")
	must(t, a.Client, "browser_storage_state", map[string]any{"filename": "state.json"}, "1 cookie")
	must(t, a.Client, "browser_take_screenshot", map[string]any{"filename": "shot.png"}, "Screenshot")
	stateA := filepath.Join(dirA, "state.json")
	shotA, err := os.ReadFile(filepath.Join(dirA, "shot.png"))
	if err != nil {
		t.Fatalf("A's screenshot is not in A's directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "state.json")); err == nil {
		t.Fatal("A's state landed in the shared output directory")
	}

	must(t, b.Client, "browser_navigate", map[string]any{"url": base + "/"}, "Files")
	fails(t, b.Client, "browser_set_storage_state", map[string]any{"filename": "state.json"}, "state.json")
	fails(t, b.Client, "browser_set_storage_state", map[string]any{"filename": stateA}, "outside the allowed roots")
	fails(t, b.Client, "browser_set_storage_state", map[string]any{"filename": "../" + httpguard.PrincipalName(tokenA) + "/state.json"}, "outside the output directory")
	fails(t, b.Client, "browser_set_input_files", map[string]any{"target": "#file", "paths": []any{stateA}}, "outside the allowed roots")
	must(t, b.Client, "browser_take_screenshot", map[string]any{"filename": "shot.png", "fullPage": true}, "Screenshot")
	if got, _ := os.ReadFile(filepath.Join(dirA, "shot.png")); string(got) != string(shotA) {
		t.Fatal("B overwrote A's screenshot")
	}
	if _, err := os.Stat(filepath.Join(dirB, "shot.png")); err != nil {
		t.Fatalf("B's screenshot is not in B's directory: %v", err)
	}
	// A still restores its own state, by name.
	must(t, a.Client, "browser_set_storage_state", map[string]any{"filename": "state.json"}, "Restored 1 cookie")
}
