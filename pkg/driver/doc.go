// Package driver makes the Playwright driver (playwright-core's cli.js run by
// a Node.js binary) available without any CDN, and runs it once per process.
//
// The server starts the driver in the background as soon as it has a client
// (the stdio client's first request, or HTTP serving), so the first browser
// call does not pay for it; every session shares the one connection it
// returns.
//
// On Linux the driver dies with the process that started it (a parent-death
// SIGKILL, armed through setpriv), and runs with a private TMPDIR marked with
// its owner, so Playwright's temporary profiles and artifacts land where a
// later server can find and remove them once their owner is gone (see
// [Owner], [PIDsUsing]). The browsers it launches die with its pipe.
package driver
