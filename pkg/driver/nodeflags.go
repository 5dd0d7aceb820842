package driver

import (
	"fmt"
	"os"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
)

// NodeFlagsEnv names the environment variable that replaces
// DefaultNodeFlags: node command-line flags for the driver, space-separated
// ("" runs node without flags). A user's NODE_OPTIONS still applies as well.
const NodeFlagsEnv = "CLOAKBROWSER_MCP_DRIVER_NODE_FLAGS"

// DefaultNodeFlags are the node flags the driver runs with unless
// NodeFlagsEnv is set. The driver moves protocol messages and snapshot
// strings through; measured with `go run ./cmd/mcpload --memory` (docs/benchmarks.md,
// Performance):
//   - --max-semi-space-size=1: V8's default young generation (16 MiB
//     semi-spaces) mostly holds garbage between collections.
//   - --max-lazy: compiles functions lazily, on their first call; the driver
//     loads far more of playwright-core than one server uses.
const DefaultNodeFlags = "--max-semi-space-size=1 --max-lazy"

// LeanHeapFlag is added to DefaultNodeFlags for a driver that serves many
// sessions (Options.LeanHeap): a smaller heap for more of the driver's CPU.
// Measured (docs/benchmarks.md): its PSS under 16 HTTP sessions 122 MiB
// against 256, its RSS after the bench's session 107–115 MiB against
// 123–126; but its bundles load in 0.363 s against 0.318 s, and a
// navigate to a 46,000-character page answers in about 164 ms against 145.
const LeanHeapFlag = "--optimize-for-size"

// leanAfterStart reports whether a driver started with NodeFlags(lean)
// turns LeanHeapFlag's heap policy on once started (lean.js): with the
// default flags, where the flag itself is not on node's command line. With
// the flag from the start, node's heap grows in small steps as
// playwright-core loads, which cost a cold first page 842 against 682 ms
// (medians of six); switched on 3 s later it cost none measured, and a
// stdio server's driver after a bench-like session held 97.3 against
// 110.7 MiB (medians of eight; docs/benchmarks.md, eighth stop). A user's own
// NodeFlagsEnv is left as it is.
func leanAfterStart(lean bool) bool {
	_, set := os.LookupEnv(NodeFlagsEnv)
	return !lean && !set
}

// NodeFlags returns the driver's node flags: $CLOAKBROWSER_MCP_DRIVER_NODE_FLAGS
// when set, else DefaultNodeFlags (with LeanHeapFlag when lean). Every word
// must be a flag (--name or --name=value).
func NodeFlags(lean bool) ([]string, error) {
	v, ok := os.LookupEnv(NodeFlagsEnv)
	if !ok {
		v = DefaultNodeFlags
		if lean {
			v += " " + LeanHeapFlag
		}
	}
	flags := strings.Fields(v)
	for _, f := range flags {
		if !strings.HasPrefix(f, "--") || len(f) < 3 {
			return nil, fmt.Errorf("%s: %s is not a node flag (want --name or --name=value, space-separated); unset it for the defaults %q",
				NodeFlagsEnv, clip.Quote(f), DefaultNodeFlags)
		}
	}
	return flags, nil
}

// nodeOptionsFlags keeps the flags node accepts in NODE_OPTIONS, for a
// driver started without the shim (which puts them on node's command line).
func nodeOptionsFlags(flags []string) []string {
	var out []string
	for _, f := range flags {
		name, _, _ := strings.Cut(f, "=")
		switch name {
		case "--max-semi-space-size", "--max-old-space-size", "--stack-trace-limit", "--v8-pool-size":
			out = append(out, f)
		}
	}
	return out
}
