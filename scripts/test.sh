#!/usr/bin/env bash
# The README's test command: installs what the tests need, then runs both
# test tiers, and says how long each part took.
#
#   deps      Debian's chromium, redis-server, Node.js >= 20 (.ci/deps) and the
#             Playwright driver through the project's own install path
#   lint      gofmt, go vet, go.mod/go.sum tidy
#   unit      go test -race -short ./... : no browser, no driver, no npm (a
#             tripwire fails any test that reaches them; internal/testtier)
#   build     the plain (no race detector) test binaries of the browser tier
#   browser   go test ./... : real Chromium through real MCP clients, each
#             test binary with one shared driver and one shared browser;
#             pkg/server's tests run in $SHARDS concurrent processes, the
#             other packages beside them, and the concurrency and stress
#             tests (race_tests) under -race beside those (started before
#             the build: their binaries are the unit tier's); then the
#             largest snapshot tests (solo_tests) beside the last pkg/server
#             process
#   conformance  the official MCP conformance suite over Streamable HTTP
#
# The graph is built twice: with the race detector (vet, the unit tier, the
# race set) and without it (the rest of the browser tier), which is cheaper
# on a 2-core machine than the detector's cost to the browser tier. deps
# (apt, npm) and the conformance suite's npm install run in the background
# while lint and the unit tier use the CPU.
#
# Comparisons with @playwright/mcp read its recorded output (testdata/upstream);
# `go tool -modfile=tools.mod task upstream` re-records it from the real one.
# Env: SHARDS (default 2), GO_TEST_TIMEOUT (default 15m), SKIP_CONFORMANCE=1.
# Extra arguments go to every `go test` of the browser tier (e.g. -v).
set -euo pipefail
cd "$(dirname "$0")/.."

# Test binaries (and the server binaries the tests build) link without
# DWARF: a link of a test binary took 0.70x the CPU (median of five paired
# runs); stack traces keep their file:line (the symbol table and pclntab
# stay).
case " ${GOFLAGS:-} " in *" -ldflags="*) ;; *) export GOFLAGS="${GOFLAGS:+$GOFLAGS }-ldflags=-w" ;; esac

shards=${SHARDS:-2}
timeout=${GO_TEST_TIMEOUT:-15m}
server=./pkg/server
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

t0=$(date +%s)
# timed name cmd…: runs cmd, records how long it took, and returns its status.
timed() {
  local name=$1 s rc=0
  shift
  s=$(date +%s)
  echo "--- $name (at $((s - t0))s)" >&2
  "$@" || rc=$?
  printf '%-12s %4ss  (from %ss)  exit %s\n' "$name" $(($(date +%s) - s)) $((s - t0)) "$rc" >>"$logs/timings"
  return $rc
}
summary() {
  echo "=== test.sh: $(($(date +%s) - t0))s in all" >&2
  sed 's/^/  /' "$logs/timings" >&2 2>/dev/null || true
}
fail() {
  if [ -n "${race_pid:-}" ]; then kill "$race_pid" 2>/dev/null || true; fi
  summary
  echo "FAIL: $1" >&2
  exit 1
}
# background name cmd…: timed, in the background, its output in $logs/name.
background() {
  local name=$1
  shift
  timed "$name" "$@" >"$logs/$name.out" 2>&1 &
  eval "pid_$name=$!"
}
# join name: waits for a background step and shows its output.
join() {
  local name=$1 pid rc=0
  pid=$(eval "echo \$pid_$name")
  wait "$pid" || rc=$?
  cat "$logs/$name.out"
  [ "$rc" = 0 ] || fail "$name (exit $rc)"
}

deps() {
  bash .ci/deps
  go run ./cmd/cloakbrowser-mcp install --driver-only
}

lint() {
  local bad
  bad=$(gofmt -l .)
  if [ -n "$bad" ]; then
    printf '%s\n' "$bad"
    echo "gofmt: the files above need formatting" >&2
    return 1
  fi
  go vet -race ./...
  if ! d=$(go mod tidy -diff); then
    printf '%s\n' "$d"
    echo "go.mod/go.sum are not tidy: run go mod tidy" >&2
    return 1
  fi
}

# The unit tier runs twice as many test binaries at a time as there are
# cores (go test's default is one a core): several of its packages spend
# their time waiting (servers that never answer, timeouts), and with one a
# core a 2-core machine sat half idle (61% busy over the tier; with the
# build cache warm, 39-40 s against 24-25 s with four).
unit() { go test -p "$((2 * $(nproc)))" -race -short -count=1 -timeout 5m ./...; }

# build compiles the browser tier's plain test binaries once, before its
# concurrent go test processes would each compile the same graph, and the
# server binary the tests run (CLOAKBROWSER_MCP_BINARY, internal/mcptest),
# which each test process would otherwise build and link for itself.
build() {
  go test -count=1 -run '^$' $(browser_packages) >/dev/null
  go build -o "$logs/bin/cloakbrowser-mcp" ./cmd/cloakbrowser-mcp
}

# race_tests are the browser tier's concurrency and stress tests: they run
# with the race detector (on the unit tier's race build, already compiled);
# the rest of the browser tier runs without it, where it would only slow the
# server's Go code (JSON of megabyte arguments, snapshots) several times over.
race_tests='^(TestStress.*|TestHTTPSessionChurn.*|TestCancel(HTTP|Stdio)|TestCDPKillStress|TestCDPBrowserKilledWithCallsInFlight|TestCDPDriverKilled|TestCDPHTTPSessions|TestSharedBrowserContexts|TestPoolLoadFleetWide|TestFleetOwnerKilled|TestBrowserLossRestartsOnNextCall|TestHTTPSessionCap|TestHTTPSessionQuotaPerPrincipal|TestHTTPOneGETStreamPerSession|TestRestartAfterDeath)$'

# solo_tests run once the rest of the browser tier but one pkg/server
# process has ended: their pages are the largest (a 1,500-row table, four
# snapshot modes) and a snapshot has a 10 s bound that a machine busy with
# all the concurrent processes can exceed.
solo_tests='^(TestSnapshotModes|TestSnapshotContent)$'

# weight is a test's wall time in seconds in the browser tier on a busy
# 2-core machine (go test -json, no race detector; the larger of two whole
# runs of this script with -json from a cold build cache), for spreading
# pkg/server's tests over the shards: heaviest first, each to the least
# loaded shard. Unlisted: 2. Refresh it from such runs when tests change
# much.
declare -A weight=(
  [TestStuckTabRecovers]=67 [TestBadInputMegabyteArguments]=67 [TestHostilePagesDoNotStall]=47
  [TestCodegenToolsMatchUpstream]=27 [TestDropinIdleTimeout]=23 [TestFamilies]=21 [TestCodegenMatchesUpstream]=20
  [TestInternalDevToolsPortsClosedToPages]=19 [TestAnswersOnlyAgent]=18 [TestDockerfile]=17 [TestDropinFilePaths]=15
  [TestCDPStdio]=14 [TestFileToolsConfined]=13 [TestScreenshotWithinCaps]=11 [TestPoolSpreadAndFailover]=11
  [TestCDPInternalPortUnreachable]=11 [TestCDPDevToolsRefused]=11 [TestImageResponses]=10 [TestHardeningTabCap]=10
  [TestFleetAnyInstanceServesAnySession]=10 [TestSIGKILLLeavesNothingBehind]=9 [TestCDPFilePolicy]=9
  [TestWaitForBoundedByActionTimeout]=8 [TestStdoutCarriesOnlyJSONRPCAndSignalsCleanUp]=8
  [TestHTTPSessionsInTheGivenBrowser]=8 [TestFleetRedisDown]=8 [TestActionResponsesShowEveryChange]=8
  [TestHTTPIdleSessionExpires]=7 [TestHTTPBrowserIsolation]=7 [TestEvaluateOnElementsLeavesNoOrigin]=7
  [TestDropinEndpoint]=7 [TestCodegenLanguages]=7 [TestBridgeMetaUserDataDir]=7 [TestBridgeMetaProxyBypass]=7
  [TestNavigationEconomy]=6 [TestMCPLoggingAndProgress]=6 [TestHTTPSlowBodies]=6 [TestFamiliesBadInput]=6
  [TestEveryCoreTool]=6 [TestCDPPrincipalIsolation]=6 [TestVideoRecording]=5 [TestFilesPerPrincipal]=5
  [TestDropinStorageState]=5 [TestDropinRecordVideo]=5 [TestCrashedRendererAnswersAtOnce]=5 [TestCDPPlaywright]=5
  [TestCDPFilesPerPrincipal]=5 [TestBridgeMetaProxyServer]=5 [TestWebMCPHostilePage]=4
  [TestVideoTabsClosedWhileRecorded]=4 [TestStealthDetectorCloakBrowserPath]=4 [TestStealthDetector]=4
  [TestStdioBinaryEndToEnd]=4 [TestPrewarmAtFirstRequest]=4 [TestHardeningDownloadCapWhileStreaming]=4
  [TestHTTPContextIsolation]=4 [TestHTTPBodyBoundEndsWithTheBody]=4 [TestFleetRedisRestarts]=4
  [TestEvaluateValuesGolden]=4 [TestDropinProxyServer]=4 [TestDropinIgnoreHTTPSErrors]=4 [TestDropinCDPEndpoint]=4
  [TestDiffBaseLost]=4 [TestBridgeMetaHeadless]=4 [TestActionTitleIsCurrent]=4 [TestWebMCPSessionToolsHTTP]=3
  [TestStorageIsolation]=3 [TestSecrets]=3 [TestScreenshotCapFlags]=3 [TestResourcesStdio]=3
  [TestNavigateBackSeenPage]=3 [TestHardeningSessionLogBudgetPerPrincipal]=3 [TestHardeningRefOfClosedTab]=3
  [TestHTTPBinary]=3 [TestDropinEveryUpstreamFlag]=3 [TestDropinBlockedOrigins]=3 [TestBridgeMetaContextOptions]=3
  [TestBadInputTypeSlowlyTimeout]=3
)

# browser_packages lists the packages with browser-tier tests: those whose
# tests reach a browser, driver or upstream through internal/mcptest or skip
# themselves with testtier.BrowserTier / testing.Short. The others' tests
# are pure Go and already ran in the unit tier (under -race): the browser
# tier would only link and run them again.
browser_packages() {
  go list -f '{{.ImportPath}} {{.Dir}}' ./... | while read -r pkg dir; do
    if grep -qsE 'BrowserTier|mcptest\.|testing\.Short\(\)' "$dir"/*_test.go; then echo "$pkg"; fi
  done
}

# browser runs pkg/server's top-level tests (but the race set) in $shards
# processes and the other packages' in one more, beside the race set
# (started before the build), and prints each log when all have ended.
browser() {
  local tests others pids=() names=() status=0 i t
  mapfile -t tests < <(go test -list '.*' "$server" | grep -E '^(Test|Example)' | grep -Ev "$race_tests" | grep -Ev "$solo_tests" |
    while read -r t; do echo "${weight[$t]:-2} $t"; done | sort -rn | cut -d' ' -f2)
  if [ ${#tests[@]} -eq 0 ]; then
    echo "no tests listed in $server" >&2
    return 1
  fi
  local load=() lists=()
  for ((i = 0; i < shards; i++)); do load+=(0) lists+=(""); done
  for t in "${tests[@]}"; do
    local min=0
    for ((i = 1; i < shards; i++)); do if ((load[i] < load[min])); then min=$i; fi; done
    load[min]=$((load[min] + ${weight[$t]:-2}))
    lists[min]+="${lists[min]:+|}$t"
  done
  others=$(browser_packages | grep -vx "github.com/cloakmcp/cloakbrowser-mcp/pkg/server")
  pids+=("$race_pid") names+=(race)
  go test -count=1 -timeout "$timeout" -skip "$race_tests" "$@" $others >"$logs/others" 2>&1 &
  pids+=($!) names+=(others)
  for ((i = 0; i < shards; i++)); do
    go test -count=1 -timeout "$timeout" -run "^(${lists[i]})\$" "$@" "$server" >"$logs/server-$i" 2>&1 &
    pids+=($!) names+=("server-$i")
  done
  # The solo tests start once the race set, the other packages and one
  # pkg/server process have ended: beside the last pkg/server process only.
  # (pids 0 and 1 are the race set and the other packages, as added above.)
  local -A rcs=()
  local left=("${!pids[@]}") solo_pid="" j
  while ((${#left[@]} > 0)); do
    local rc=0 done_pid="" keep=() waitfor=()
    for j in "${left[@]}"; do waitfor+=("${pids[$j]}"); done
    wait -n -p done_pid "${waitfor[@]}" || rc=$?
    for j in "${left[@]}"; do
      if [ "${pids[$j]}" = "$done_pid" ]; then rcs[$j]=$rc; else keep+=("$j"); fi
    done
    left=("${keep[@]}")
    if [ -z "$solo_pid" ] && [ -n "${rcs[0]+set}" ] && [ -n "${rcs[1]+set}" ] && ((${#rcs[@]} >= 3)); then
      go test -count=1 -timeout "$timeout" -run "$solo_tests" "$@" "$server" >"$logs/solo" 2>&1 &
      solo_pid=$!
    fi
  done
  for i in "${!pids[@]}"; do
    echo "=== ${names[$i]} (exit ${rcs[$i]})"
    cat "$logs/${names[$i]}"
    if [ "${rcs[$i]}" != 0 ]; then status=1; fi
  done
  local rc=0
  wait "$solo_pid" || rc=$?
  echo "=== solo (exit $rc)"
  cat "$logs/solo"
  if [ "$rc" != 0 ]; then status=1; fi
  echo "browser tier: ${#tests[@]} top-level tests of $server in $shards shards (estimated ${load[*]} s), the other packages beside them, the race set ($race_tests) under -race, then $solo_tests beside the last $server process"
  return $status
}

conformance_install() {
  if [ "${SKIP_CONFORMANCE:-}" = 1 ]; then return 0; fi
  bash scripts/conformance.sh --install-only
}

conformance() {
  if [ "${SKIP_CONFORMANCE:-}" = 1 ]; then
    echo "conformance: skipped (SKIP_CONFORMANCE=1)"
    return 0
  fi
  bash scripts/conformance.sh
}

# What the tests need comes over the network and the disk (apt, npm) while
# the CPU builds and runs what needs only Go: lint and the unit tier.
background deps deps
background conformance_install conformance_install
timed lint lint || fail lint
timed unit unit || fail unit
join deps
# The race set needs no compile (the unit tier built its binaries): it
# starts now, beside the plain build, and browser waits for it.
go test -race -count=1 -timeout "$timeout" -run "$race_tests" "$@" $(browser_packages) >"$logs/race" 2>&1 &
race_pid=$!
timed build build || fail build
export CLOAKBROWSER_MCP_BINARY=$logs/bin/cloakbrowser-mcp
timed browser browser "$@" || fail browser
join conformance_install
timed conformance conformance || fail conformance
summary
