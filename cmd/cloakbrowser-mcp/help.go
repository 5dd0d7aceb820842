package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/config"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/smoke"
)

// commandHelp is each command's help, printed by `help COMMAND` and
// `COMMAND --help`; serve's is the whole usage.
var commandHelp = map[string]string{
	"serve": "",
	"install": `Usage: cloakbrowser-mcp install [--driver-only] [--require-cloakbrowser] [flags]

Installs the Playwright driver (playwright-core from the npm registry, run by
Node.js >= 20) and the CloakBrowser build (from cloakbrowser.dev, else GitHub
releases; its signed SHA256SUMS is verified) into ~/.cloakbrowser. The download
shows a progress bar on a terminal (no colour when NO_COLOR is set) and a plain
line at every 10% or 5 s otherwise. When CloakBrowser cannot be fetched but a
system Chromium (or --binary-path) answers, it says the server will use that
browser, without stealth, and exits 0. Exit 1 when the server could not work
(no driver, no browser at all, a download that failed its verification), or
with --require-cloakbrowser when CloakBrowser is not installed; each with the
next step to take.

Flags of its own:
  --driver-only            install the Playwright driver only (a system
                           Chromium or --binary-path is the browser)
  --require-cloakbrowser   exit 1 when CloakBrowser cannot be installed, even
                           if a system Chromium would serve

Common flags that matter here (all of serve's are accepted; see --help):
  --driver-dir, --node-path, --binary-path

Environment:
  CLOAKBROWSER_CACHE_DIR      cache root (default ~/.cloakbrowser)
  CLOAKBROWSER_VERSION        exact CloakBrowser version to install
  CLOAKBROWSER_DOWNLOAD_URL   a mirror's base URL (disables the GitHub fallback)
  CLOAKBROWSER_SKIP_CHECKSUM  "true": skip the signature check (only with
                              CLOAKBROWSER_DOWNLOAD_URL; logged as a WARNING)
  PLAYWRIGHT_GO_NPM_REGISTRY  an npm registry mirror for the driver
  NO_COLOR                    no colour in the progress bar
`,
	"doctor": `Usage: cloakbrowser-mcp doctor [--json] [--no-launch] [flags]

Reports what the server would use and why: the Playwright driver and Node.js,
the browser binary (flag, env, cache, or a system Chromium, with everything
tried), that the binary answers --version like a Chromium, and (unless
--no-launch) a real launch. It never downloads; when CloakBrowser is not
installed it asks the download origin for the release's SHA256SUMS to say
whether the server will download it or use the system Chromium. Exit 1 when
the server could not work.

Flags of its own:
  --json        print the report as JSON
  --no-launch   do not launch a browser

Every flag of serve is accepted and checked (see --help).
`,
	"version": `Usage: cloakbrowser-mcp version   (or --version, -V)

Prints this build's version, the Playwright driver, upstream tool set and
CloakBrowser versions it was built for, to stdout.
`,
	"smoke": "", // pkg/smoke prints its own
	"help": `Usage: cloakbrowser-mcp help [COMMAND]

Prints the usage (every command and flag), or COMMAND's help, to stdout.
`,
}

// printHelp writes cmd's help to stdout; an unknown cmd is exit 2.
func printHelp(cmd string, stdout, stderr io.Writer) int {
	h, ok := commandHelp[cmd]
	switch {
	case !ok:
		fmt.Fprintf(stderr, "cloakbrowser-mcp: no help for %q: commands are serve, install, doctor, smoke, version, help\n", quote(cmd))
		return 2
	case cmd == "serve": // the whole usage: every command and its flags
		config.PrintUsage(stdout)
		fmt.Fprintln(stdout)
		printSmokeHelp(stdout)
		return 0
	case cmd == "smoke":
		printSmokeHelp(stdout)
		return 0
	}
	fmt.Fprint(stdout, h)
	return 0
}

// printSmokeHelp writes smoke's usage and flags, which pkg/smoke writes to
// its stderr, to w.
func printSmokeHelp(w io.Writer) {
	self, _ := os.Executable()
	smoke.Main(context.Background(), self, []string{"--help"}, w, w)
}
