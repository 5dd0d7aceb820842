// Package cdpproxy publishes a browser's loopback DevTools endpoint to CDP
// clients through a leased port and a revocable capability URL.
//
// It sits beside the MCP flow: a session owns one Proxy, points it at the
// current browser generation's internal endpoint, and revokes it when that
// browser is lost. Of this module it imports only internal/portrange, the
// port-range parser it shares with pkg/config's validation.
//
// A session's life, in order:
//
//	leaser, _ := cdpproxy.NewLeaser("127.0.0.1", "9222-9230") // once per process
//	lease, _ := leaser.Lease(ctx)                              // stable for the session
//	proxy, _ := cdpproxy.New(lease, cdpproxy.Config{})
//	url, _ := proxy.Publish("http://127.0.0.1:41234")          // after the ownership proof
//	proxy.Revoke()                                             // browser lost; URL now 404
//	url, _ = proxy.Publish("http://127.0.0.1:41999")           // replacement: new capability
//	proxy.Close()                                              // revoke, close sockets and listener
//	lease.Release()
//
// What a client may send: only methods on the allowlist (allowlist.go);
// never to a DevTools or WebUI target, which it is not even shown
// (targets.go); under the file policy, only files and download directories
// in the caller's own directory (filepolicy.go). A refused command is
// answered with a CDP error and not forwarded (inspect.go).
//
// Answers to clients: 404 for any unknown, wrong or revoked capability (one
// body, one timing); 403 for a Host or Origin that is not allowed; 503 with
// Retry-After over a concurrency limit; 502/504 when the browser fails; 431
// for oversized headers. All error bodies are {"error":{"code","message"}}.
// A proxied WebSocket is closed with 1001 on revocation, 1009 for a message
// over the size limit, 1002 for a client protocol error and 1011 when the
// browser side fails; a peer's own close code is relayed.
package cdpproxy
