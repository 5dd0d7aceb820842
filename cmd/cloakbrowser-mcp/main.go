// Command cloakbrowser-mcp is an MCP server that drives a real (CloakBrowser)
// Chromium through playwright-go.
//
//	cloakbrowser-mcp [serve] [flags]     serve MCP (stdio by default)
//	cloakbrowser-mcp install [--driver-only]
//	cloakbrowser-mcp doctor [--json] [--no-launch]
//	cloakbrowser-mcp version
//	cloakbrowser-mcp smoke [flags] FILE...   run smoke scenarios (pkg/smoke)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/server"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/smoke"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && !isFlag(args[0]) {
		cmd, args = args[0], args[1:]
	}
	if cmd == "smoke" { // flags of its own: see pkg/smoke
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintf(stderr, "cloakbrowser-mcp: smoke: %v\n", err)
			return 1
		}
		return smoke.Main(context.Background(), self, args, stdout, stderr)
	}
	local := map[string]bool{}
	for _, f := range []string{"--json", "--no-launch", "--driver-only"} {
		if i := slices.Index(args, f); i >= 0 {
			local[f] = true
			args = slices.Delete(args, i, i+1)
		}
	}
	if slices.Contains(args, "--version") || slices.Contains(args, "-V") {
		fmt.Fprintln(stdout, server.VersionString())
		return 0
	}
	cfg, rest, err := config.Load(args, os.Getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var unknown *config.UnknownFlagError
	if errors.As(err, &unknown) {
		fmt.Fprintf(stderr, "cloakbrowser-mcp: %v\n", err)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "cloakbrowser-mcp: %v\n(run with --help for the flags)\n", err)
		return 2
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "cloakbrowser-mcp: unexpected argument %q\n", rest[0])
		return 2
	}
	ctx := context.Background()
	switch cmd {
	case "serve":
		// Bad input refuses to start with the flag, the value and what is
		// accepted, before anything is launched.
		if err := cfg.Validate(); err != nil {
			fmt.Fprintf(stderr, "cloakbrowser-mcp: %v\n", err)
			return 2
		}
		if err := server.Run(ctx, cfg, stdin, stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "cloakbrowser-mcp: %v\n", err)
			return 1
		}
		return 0
	case "install":
		return server.InstallCommand(ctx, cfg, !local["--driver-only"], stdout, stderr)
	case "doctor":
		return server.DoctorCommand(ctx, cfg, server.DoctorOptions{JSON: local["--json"], Launch: !local["--no-launch"]}, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, server.VersionString())
		return 0
	case "help":
		config.PrintUsage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "cloakbrowser-mcp: unknown command %q (serve, install, doctor, smoke, version)\n", cmd)
		return 2
	}
}

func isFlag(s string) bool { return len(s) > 0 && s[0] == '-' }
