// Package httpguard is the Streamable HTTP transport's request policy: pure
// rules over an *http.Request and the HTTP configuration, with no MCP
// session or browser in sight.
//
// In the flow client → transport → policy → server → tools → session it is
// the policy step: pkg/server's transport wraps its handler in BoundBody
// (a body must arrive in time) and Policy.HostOrigin (DNS rebinding and
// cross-site requests), and its MCP endpoint asks Policy.Principal who the
// caller is (bearer tokens, compared in constant time), Policy.ReadBody for
// the body under the size cap, and Policy.ProbeCaller whether a probe may
// answer in detail. PrincipalName names a token's sessions, logs and files.
// Refusals are JSON-RPC error objects (WriteError), as the transport's own.
package httpguard
