#!/usr/bin/env bash
# Runs the example smoke scenarios (examples/smoke/*.yaml) with the
# `cloakbrowser-mcp smoke` runner twice: against this server, and against
# @playwright/mcp 0.0.83 spawned with --server-cmd. JUnit reports go to
# $SMOKE_OUT (default .smoke/): ours.xml and upstream.xml.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${SMOKE_OUT:-.smoke}"
mkdir -p "$out" bin
go build -o bin/cloakbrowser-mcp ./cmd/cloakbrowser-mcp
chromium="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$chromium" ]; then
  echo "smoke.sh: no chromium on PATH: run bash .ci/deps (Debian: apt-get install -y chromium)" >&2
  exit 1
fi

# Ours: system Chromium, no CloakBrowser download in CI.
CLOAK_PLAYWRIGHT_MCP_NO_DOWNLOAD=1 CLOAKBROWSER_BINARY_PATH="$chromium" \
  bin/cloakbrowser-mcp smoke --parallel 2 --junit "$out/ours.xml" --artifacts "$out/artifacts-ours" examples/smoke/*.yaml

# Upstream, installed from the npm registry into the cache the Go tests use
# (internal/mcptest.UpstreamDir).
updir="${CLOAKBROWSER_MCP_UPSTREAM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cloakbrowser-mcp/upstream/playwright-mcp-0.0.83}"
cli="$updir/node_modules/@playwright/mcp/cli.js"
if [ ! -f "$cli" ] || [ "$(node -p "require('$updir/node_modules/@playwright/mcp/package.json').version" 2>/dev/null)" != 0.0.83 ]; then
  mkdir -p "$updir"
  [ -f "$updir/package.json" ] || echo '{"name":"cloakbrowser-mcp-upstream","private":true}' > "$updir/package.json"
  (cd "$updir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --save-exact @playwright/mcp@0.0.83 >&2)
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bin/cloakbrowser-mcp smoke --parallel 2 --junit "$out/upstream.xml" \
  --server-cmd "node $cli --headless --isolated --no-sandbox --executable-path $chromium --output-dir $work/out" \
  examples/smoke/*.yaml
