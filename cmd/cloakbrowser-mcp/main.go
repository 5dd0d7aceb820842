// Command cloakbrowser-mcp is an MCP server that drives a real (CloakBrowser)
// Chromium through playwright-go.
//
//	cloakbrowser-mcp [serve] [flags]     serve MCP (stdio by default)
//	cloakbrowser-mcp install [--driver-only] [--require-cloakbrowser]
//	cloakbrowser-mcp doctor [--json] [--no-launch]
//	cloakbrowser-mcp smoke [flags] FILE...   run smoke scenarios (pkg/smoke)
//	cloakbrowser-mcp version | --version | -V
//	cloakbrowser-mcp help [COMMAND] | --help | -h
//
// Help and the version go to stdout; errors to stderr. Nothing is coloured
// except install's progress bar on a terminal, and not under NO_COLOR.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cli"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/server"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/smoke"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// localFlags are the flags a command takes besides the common ones.
var localFlags = map[string][]string{
	"install": {"--driver-only", "--require-cloakbrowser"},
	"doctor":  {"--json", "--no-launch"},
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && !isFlag(args[0]) {
		cmd, args = args[0], args[1:]
	}
	if cmd == "help" {
		if len(args) == 0 || isFlag(args[0]) {
			return printHelp("serve", stdout, stderr)
		}
		return printHelp(args[0], stdout, stderr)
	}
	if _, ok := commandHelp[cmd]; !ok {
		fmt.Fprintf(stderr, "cloakbrowser-mcp: unknown command %q (serve, install, doctor, smoke, version, help)\n", quote(cmd))
		return 2
	}
	if wantsHelp(args) && !(cmd == "smoke" && len(args) > 0 && args[0] == "record") { // smoke record has its own
		return printHelp(cmd, stdout, stderr)
	}
	if cmd == "smoke" { // flags of its own: see pkg/smoke
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintf(stderr, "cloakbrowser-mcp: smoke: %v\n", err)
			return 1
		}
		return smoke.Main(context.Background(), self, args, stdout, stderr)
	}
	if cmd == "version" || slices.Contains(args, "--version") || slices.Contains(args, "-V") {
		fmt.Fprintln(stdout, cli.VersionString())
		return 0
	}
	local := map[string]bool{}
	for _, f := range localFlags[cmd] {
		if i := slices.Index(args, f); i >= 0 {
			local[f] = true
			args = slices.Delete(args, i, i+1)
		}
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
		fmt.Fprintf(stderr, "cloakbrowser-mcp: unexpected argument %q (run `cloakbrowser-mcp help %s`)\n", quote(rest[0]), cmd)
		return 2
	}
	ctx := context.Background()
	switch cmd {
	case "install":
		return cli.Install(ctx, cfg, cli.InstallOptions{DriverOnly: local["--driver-only"], RequireCloakBrowser: local["--require-cloakbrowser"]}, stdout, stderr)
	case "doctor":
		return cli.Doctor(ctx, cfg, cli.DoctorOptions{JSON: local["--json"], Launch: !local["--no-launch"]}, stdout, stderr)
	}
	// serve: bad input refuses to start with the flag, the value and what
	// is accepted, before anything is launched.
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "cloakbrowser-mcp: %v\n", err)
		return 2
	}
	if err := server.Run(ctx, cfg, stdin, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "cloakbrowser-mcp: %v\n", err)
		return 1
	}
	return 0
}

// wantsHelp reports -h, -help or --help among args (before a "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

func isFlag(s string) bool { return len(s) > 0 && s[0] == '-' }

// quote shortens a value for an error message.
func quote(s string) string {
	if r := []rune(s); len(r) > 100 {
		return fmt.Sprintf("%s… (%d chars)", string(r[:100]), len(s))
	}
	return s
}
