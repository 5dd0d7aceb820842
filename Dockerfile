# cloakbrowser-mcp over Streamable HTTP, with the CloakBrowser stealth
# Chromium (Debian's Chromium as the fallback) and the Playwright driver.
# Build:   docker build -t cloakbrowser-mcp .
# Run:     docker run --init -p 8931:8931 -e CLOAK_PLAYWRIGHT_MCP_HTTP_AUTH_TOKEN="$(openssl rand -hex 32)" \
#            --security-opt seccomp=unconfined cloakbrowser-mcp
# (Chromium's sandbox stays on; it needs user namespaces, which Docker's
# default seccomp profile refuses: see docs/http-and-fleet.md, "Deployment (container)".)
# pkg/server's TestDockerfile runs this file's ENV, RUN'd cloakbrowser-mcp
# commands, CMD and HEALTHCHECK against the binary, without a container.

ARG GO_IMAGE=golang:1.26-trixie
ARG BASE_IMAGE=debian:trixie-slim

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/cloakbrowser-mcp ./cmd/cloakbrowser-mcp

FROM ${BASE_IMAGE}
# chromium: the fallback browser, when CloakBrowser cannot be had (see the
# install below); nodejs (>= 20 on trixie): runs the Playwright driver; tini: PID 1 that
# reaps Chromium's children; curl: the health check.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium nodejs tini curl ca-certificates fonts-liberation \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 --shell /usr/sbin/nologin mcp
COPY --from=build /out/cloakbrowser-mcp /usr/local/bin/cloakbrowser-mcp
USER mcp
WORKDIR /home/mcp
# The driver, and CloakBrowser when its download origin is reachable from
# the build (verified against its signature; the build does not fail when
# it is not: `install` then says it falls back on Debian's Chromium).
RUN cloakbrowser-mcp install

ENV CLOAK_PLAYWRIGHT_MCP_TRANSPORT=streamable-http \
    CLOAK_PLAYWRIGHT_MCP_HTTP_HOST=0.0.0.0 \
    CLOAK_PLAYWRIGHT_MCP_HTTP_PORT=8931 \
    CLOAK_PLAYWRIGHT_MCP_OUTPUT_DIR=/home/mcp/output
# Downloads stay on: an image built without CloakBrowser resolves it when
# the server starts (CLOAKBROWSER_DOWNLOAD_URL names a mirror), and when it
# cannot, the log says so in one warning ("CloakBrowser not available: using
# a system Chromium WITHOUT stealth patches"), as `doctor` and
# cloakbrowser_binary_info do ("stealth": false). Set
# CLOAK_PLAYWRIGHT_MCP_NO_DOWNLOAD=true to keep an image off the network.
# The bearer token comes from CLOAK_PLAYWRIGHT_MCP_HTTP_AUTH_TOKEN at run
# time; without one the server refuses to bind 0.0.0.0.
EXPOSE 8931
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8931/healthz || exit 1
ENTRYPOINT ["tini", "--", "cloakbrowser-mcp"]
CMD ["serve"]
