// Package cloakbrowser resolves, downloads and verifies the CloakBrowser
// Chromium build, falls back to a system Chromium it reports as such, and
// builds the launch arguments for whichever binary was found.
//
// It sits below the session layer, which calls Resolve before each browser
// launch and passes StealthArgs and IgnoredDefaultArgs to Playwright; the
// install and doctor commands call Install and Resolve directly. It imports
// nothing of ours.
//
// Resolution follows the CloakBrowser wrappers and shares their cache
// (~/.cloakbrowser/chromium-<version>/): an explicit binary path, the cache,
// a download, then a system Chromium. Downloads fail closed: the signed
// SHA256SUMS (Ed25519, pinned keys), its version= line and the archive's
// SHA-256 must all check out before anything is unpacked, and an archive
// with an unsafe entry is refused as a whole.
package cloakbrowser
