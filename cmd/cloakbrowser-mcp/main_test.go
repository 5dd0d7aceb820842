package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestHelp: help goes to stdout with exit 0, names every command and its
// own flags; a command's help is its own; unknown names are exit 2 on
// stderr.
func TestHelp(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		code     int
		stdout   []string // each must appear
		stderr   string
		noStdout bool
	}{
		{name: "--help", args: []string{"--help"}, stdout: []string{
			"install [--driver-only]", "doctor [--json] [--no-launch]", "smoke [flags] FILE...", "version, --version, -V", "help [COMMAND]",
			"--binary-path", "--http-auth-token", "-junit FILE", "-server-url URL"}},
		{name: "-h", args: []string{"-h"}, stdout: []string{"Usage: cloakbrowser-mcp [command] [flags]"}},
		{name: "help", args: []string{"help"}, stdout: []string{"Usage: cloakbrowser-mcp [command] [flags]", "--proxy-server"}},
		{name: "help install", args: []string{"help", "install"}, stdout: []string{"Usage: cloakbrowser-mcp install [--driver-only]", "--driver-only", "--require-cloakbrowser", "NO_COLOR", "CLOAKBROWSER_DOWNLOAD_URL"}},
		{name: "install --help", args: []string{"install", "--help"}, stdout: []string{"Usage: cloakbrowser-mcp install"}},
		{name: "help doctor", args: []string{"help", "doctor"}, stdout: []string{"--json", "--no-launch", "never downloads"}},
		{name: "doctor -h", args: []string{"doctor", "-h"}, stdout: []string{"Usage: cloakbrowser-mcp doctor"}},
		{name: "help smoke", args: []string{"help", "smoke"}, stdout: []string{"usage: cloakbrowser-mcp smoke", "-report-json FILE"}},
		{name: "smoke --help", args: []string{"smoke", "--help"}, stdout: []string{"usage: cloakbrowser-mcp smoke", "-parallel N"}},
		{name: "help version", args: []string{"help", "version"}, stdout: []string{"--version, -V"}},
		{name: "help help", args: []string{"help", "help"}, stdout: []string{"help [COMMAND]"}},
		{name: "help of an unknown command", args: []string{"help", "nope"}, code: 2, stderr: `no help for "nope"`, noStdout: true},
		{name: "unknown command", args: []string{"nope"}, code: 2, stderr: `unknown command "nope"`, noStdout: true},
		{name: "a long unknown command is cut", args: []string{strings.Repeat("x", 5000)}, code: 2, stderr: "… (5000 chars)", noStdout: true},
		{name: "doctor's flag on serve", args: []string{"--json"}, code: 2, stderr: "unknown flag --json", noStdout: true},
		{name: "install's flag on doctor", args: []string{"doctor", "--driver-only"}, code: 2, stderr: "unknown flag --driver-only", noStdout: true},
		{name: "stray argument", args: []string{"doctor", "extra"}, code: 2, stderr: "help doctor", noStdout: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, strings.NewReader(""), &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout.String(), stderr.String())
			}
			for _, w := range tc.stdout {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			if tc.code == 0 && stderr.Len() > 0 {
				t.Errorf("help wrote to stderr: %s", stderr.String())
			}
			if tc.noStdout && stdout.Len() > 0 {
				t.Errorf("stdout: %s", stdout.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) || len(stderr.String()) > 400 {
				t.Errorf("stderr %q lacks %q (or is long)", stderr.String(), tc.stderr)
			}
		})
	}
}

// TestVersion: version, --version and -V print the version on stdout and
// exit 0, whatever the command.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-V"}, {"install", "--version"}, {"--headless", "-V"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "cloakbrowser-mcp ") || stderr.Len() > 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout.String(), stderr.String())
		}
	}
}
