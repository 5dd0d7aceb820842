package cloakbrowser

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// limits bound what a download may cost; tests shrink them.
type limits struct {
	archive   int64 // compressed archive bytes
	manifest  int64 // SHA256SUMS bytes
	signature int64 // SHA256SUMS.sig bytes
	extracted int64 // total bytes written by extraction
	entries   int   // archive entries
}

var defaultLimits = limits{
	archive:   1 << 30, // 1 GiB; the Linux build is ≈150 MB
	manifest:  1 << 20,
	signature: 4 << 10,
	extracted: 4 << 30,
	entries:   200_000,
}

// DownloadURLFor returns the archive URL for a version and platform under a
// download base, e.g. https://cloakbrowser.dev/chromium-v146.0.7680.177.5/
// cloakbrowser-linux-x64.tar.gz. An empty base means DefaultDownloadBase.
func DownloadURLFor(base, version, platform string) string {
	if base == "" {
		base = DefaultDownloadBase
	}
	return releaseDir(base, version) + "/" + ArchiveName(platform)
}

func releaseDir(base, version string) string {
	return strings.TrimRight(base, "/") + "/chromium-v" + version
}

// download fetches, verifies and installs r.version, trying the primary
// origin and then (without a custom URL) GitHub releases. The manifest is
// always taken from the same origin as the archive. A fetch failure moves on
// to the next origin; a verification failure stops at once (fail closed).
func (r *resolver) download(ctx context.Context) (BinaryInfo, error) {
	r.removeStaleTemps()
	bases := []string{r.base}
	if !r.custom {
		bases = append(bases, GitHubReleasesBase)
	}
	var errs originErrors
	for i, base := range bases {
		err := r.installFrom(ctx, base)
		if err == nil {
			info := r.cloakInfo(SourceDownload)
			info.DownloadURL = redactURL(r.downloadURL(base))
			return info, nil
		}
		if isTampering(err) || ctx.Err() != nil {
			return BinaryInfo{}, fmt.Errorf("download CloakBrowser %s for %s from %s: %w", r.version, r.platform, redactURL(base), err)
		}
		errs = append(errs, err)
		if i+1 < len(bases) {
			// The cause is said once, in the error returned at the end.
			r.logf("download of CloakBrowser %s from %s failed; trying %s", r.version, redactURL(base), redactURL(bases[i+1]))
		}
	}
	return BinaryInfo{}, fmt.Errorf("download CloakBrowser %s for %s: %w", r.version, r.platform, errs)
}

// CheckDownload reports whether the CloakBrowser build could be downloaded
// now, without downloading it: it fetches what a download fetches first
// (the signed SHA256SUMS, a few hundred bytes; with SkipChecksum, a HEAD of
// the archive) from each origin in turn and returns nil at the first that
// answers. The error gives each origin's cause once. doctor uses it to say
// whether the server will download CloakBrowser or use its fallback.
func CheckDownload(ctx context.Context, o Options) error {
	r, err := newResolver(o)
	if err != nil {
		return err
	}
	if r.platformErr != nil {
		return fmt.Errorf("no CloakBrowser build for this platform (%w)", r.platformErr)
	}
	bases := []string{r.base}
	if !r.custom {
		bases = append(bases, GitHubReleasesBase)
	}
	var errs originErrors
	for _, base := range bases {
		dir := releaseDir(base, r.version)
		if r.skipChecksum {
			err = r.head(ctx, dir+"/"+ArchiveName(r.platform))
		} else {
			_, err = r.fetchSmall(ctx, dir+"/SHA256SUMS", r.limits.manifest)
		}
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return errs
}

// head checks that a URL answers 200 to HEAD.
func (r *resolver) head(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
	if err != nil {
		return fmt.Errorf("check %s: %w", redactURL(u), err)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("check %s: %w", redactURL(u), err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("check %s: HTTP %s", redactURL(u), resp.Status)
	}
	return nil
}

// originErrors are the failures of each download origin, in order. Its text
// gives each cause once, on one line; errors.Is sees every one.
type originErrors []error

func (e originErrors) Error() string {
	s := make([]string, len(e))
	for i, err := range e {
		s[i] = err.Error()
	}
	return strings.Join(s, "; then ")
}

func (e originErrors) Unwrap() []error { return e }

// staleAfter is the age after which a leftover temp file or directory in the
// cache root (from a killed installer) is removed. Younger ones may belong to
// an install running in another process.
const staleAfter = 24 * time.Hour

// removeStaleTemps deletes old .download-*, .chromium-*.partial-* and
// .chromium-*.stale-* leftovers, best effort.
func (r *resolver) removeStaleTemps() {
	ents, err := os.ReadDir(r.cacheRoot)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, ".download-") &&
			!(strings.HasPrefix(n, ".chromium-") && (strings.Contains(n, ".partial-") || strings.Contains(n, ".stale-"))) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleAfter {
			_ = os.RemoveAll(filepath.Join(r.cacheRoot, n))
		}
	}
}

func (r *resolver) installFrom(ctx context.Context, base string) error {
	dir := releaseDir(base, r.version)
	name := ArchiveName(r.platform)

	var want string
	if r.skipChecksum {
		r.logf("WARNING: checksum and signature verification skipped for custom download URL %s", redactURL(base))
	} else {
		sums, err := r.fetchSmall(ctx, dir+"/SHA256SUMS", r.limits.manifest)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrManifestUnavailable, err)
		}
		sig, err := r.fetchSmall(ctx, dir+"/SHA256SUMS.sig", r.limits.signature)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrManifestUnavailable, err)
		}
		m, err := verifyManifest(sums, sig, r.keys, r.version)
		if err != nil {
			return err
		}
		h, ok := m.Sums[name]
		if !ok {
			return fmt.Errorf("verify %s %s: signed SHA256SUMS has no entry for it: %w", name, r.version, ErrChecksumMismatch)
		}
		want = h
		r.logf("SHA256SUMS for CloakBrowser %s: Ed25519 signature and version verified", r.version)
	}

	if err := os.MkdirAll(r.cacheRoot, 0o755); err != nil {
		return fmt.Errorf("create cache dir: %w", err)
	}
	tmp, got, err := r.fetchArchive(ctx, dir+"/"+name)
	if tmp != "" {
		defer os.Remove(tmp)
	}
	if err != nil {
		return err
	}
	if want != "" && got != want {
		return fmt.Errorf("verify %s %s: sha256 %s, signed SHA256SUMS says %s: %w", name, r.version, got, want, ErrChecksumMismatch)
	}
	return r.extract(ctx, tmp)
}

// fetch GETs a URL and checks for 200.
func (r *resolver) fetch(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", redactURL(u), err)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		// net/http only masks the password; drop user and query too. Name
		// the URL once, not as `Get "…"` inside the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			return nil, fmt.Errorf("fetch %s: %w", redactURL(u), ue.Err)
		}
		return nil, fmt.Errorf("fetch %s: %w", redactURL(u), err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("fetch %s: HTTP %s", redactURL(u), resp.Status)
	}
	return resp, nil
}

func (r *resolver) fetchSmall(ctx context.Context, u string, limit int64) ([]byte, error) {
	resp, err := r.fetch(ctx, u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", redactURL(u), err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("fetch %s: larger than %d bytes", redactURL(u), limit)
	}
	return b, nil
}

// fetchArchive streams the archive into a temp file inside the cache root
// while hashing it. It returns the temp file (to be removed by the caller,
// also on error) and the hex SHA-256.
func (r *resolver) fetchArchive(ctx context.Context, u string) (tmp, sum string, err error) {
	resp, err := r.fetch(ctx, u)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	if resp.ContentLength > r.limits.archive {
		return "", "", fmt.Errorf("fetch %s: %d bytes exceeds the %d-byte limit", redactURL(u), resp.ContentLength, r.limits.archive)
	}
	f, err := os.CreateTemp(r.cacheRoot, ".download-*"+archiveExt(r.platform))
	if err != nil {
		return "", "", fmt.Errorf("create download file: %w", err)
	}
	tmp = f.Name()
	r.logf("downloading CloakBrowser %s from %s", r.version, redactURL(u))
	h := sha256.New()
	var pw ProgressReporter = &logProgress{total: resp.ContentLength, logf: r.logf}
	if r.progress != nil {
		pw = r.progress("CloakBrowser "+r.version, resp.ContentLength)
	}
	n, err := io.Copy(io.MultiWriter(f, h, pw), io.LimitReader(resp.Body, r.limits.archive+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	pw.Close(err)
	if err != nil {
		return tmp, "", fmt.Errorf("fetch %s: %w", redactURL(u), err)
	}
	if n > r.limits.archive {
		return tmp, "", fmt.Errorf("fetch %s: larger than the %d-byte limit", redactURL(u), r.limits.archive)
	}
	if r.progress == nil {
		r.logf("downloaded %d MB", n>>20)
	}
	return tmp, hex.EncodeToString(h.Sum(nil)), nil
}

// ProgressReporter is fed the bytes of the archive download and closed at
// its end with the download's error (nil on success); see Options.Progress.
type ProgressReporter interface {
	io.Writer
	Close(err error)
}

// logProgress logs every 10% of a download of known size (the default
// ProgressReporter, for servers whose stderr is a log).
type logProgress struct {
	total, done int64
	last        int64
	logf        func(string, ...any)
}

func (p *logProgress) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if p.total > 0 {
		if pct := p.done * 100 / p.total; pct >= p.last+10 {
			p.last = pct - pct%10
			p.logf("download progress: %d%% (%d/%d MB)", pct, p.done>>20, p.total>>20)
		}
	}
	return len(b), nil
}

func (p *logProgress) Close(error) {}

// Manifest is a parsed SHA256SUMS file.
type Manifest struct {
	// Version is the value of the version=<v> line, "" if absent.
	Version string
	// Sums maps file names to lowercase hex SHA-256 digests.
	Sums map[string]string
}

// ParseManifest parses SHA256SUMS: a version=<v> line plus sha256sum lines
// "<64 hex>  <name>" (a "*" binary marker before the name is allowed). Other
// lines are ignored, as the wrappers do. Conflicting version lines or two
// different digests for one name are errors: a signed manifest should never
// be ambiguous.
func ParseManifest(data []byte) (Manifest, error) {
	m := Manifest{Sums: map[string]string{}}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "version="); ok {
			v = strings.TrimSpace(v)
			if m.Version != "" && m.Version != v {
				return Manifest{}, fmt.Errorf("SHA256SUMS declares two versions, %q and %q", m.Version, v)
			}
			m.Version = v
			continue
		}
		if len(line) < 66 || !isHex(line[:64]) || (line[64] != ' ' && line[64] != '\t') {
			continue
		}
		name := strings.TrimSpace(line[64:])
		name = strings.TrimPrefix(name, "*")
		if name == "" {
			continue
		}
		sum := strings.ToLower(line[:64])
		if old, ok := m.Sums[name]; ok && old != sum {
			return Manifest{}, fmt.Errorf("SHA256SUMS has two digests for %q", name)
		}
		m.Sums[name] = sum
	}
	return m, nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// verifyManifest checks, in order: the detached Ed25519 signature over the
// exact manifest bytes against any key, then that the signed manifest names
// the requested version (blocking downgrades to an older signed release).
func verifyManifest(sums, sigFile []byte, keys []ed25519.PublicKey, version string) (Manifest, error) {
	if err := verifySignature(sums, sigFile, keys); err != nil {
		return Manifest{}, fmt.Errorf("verify SHA256SUMS signature for %s: %w", version, err)
	}
	m, err := ParseManifest(sums)
	if err != nil {
		return Manifest{}, fmt.Errorf("verify SHA256SUMS for %s: %w: %w", version, ErrVersionMismatch, err)
	}
	if m.Version != version {
		declared := m.Version
		if declared == "" {
			declared = "none"
		}
		return Manifest{}, fmt.Errorf("verify SHA256SUMS for %s: manifest declares %s: %w", version, declared, ErrVersionMismatch)
	}
	return m, nil
}

// verifySignature decodes SHA256SUMS.sig, which must be strict base64 (the
// decoded bytes re-encode to exactly the trimmed file) of a 64-byte
// signature, and verifies it against each key in turn.
func verifySignature(msg, sigFile []byte, keys []ed25519.PublicKey) error {
	text := strings.TrimSpace(string(sigFile))
	sig, err := base64.StdEncoding.Strict().DecodeString(text)
	if err != nil || base64.StdEncoding.EncodeToString(sig) != text {
		return fmt.Errorf("SHA256SUMS.sig is not strict base64: %w", ErrBadSignature)
	}
	if len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("SHA256SUMS.sig holds %d bytes, want %d: %w", len(sig), ed25519.SignatureSize, ErrBadSignature)
	}
	for _, k := range keys {
		if len(k) == ed25519.PublicKeySize && ed25519.Verify(k, msg, sig) {
			return nil
		}
	}
	return fmt.Errorf("no trusted key (of %d) verifies it: %w", len(keys), ErrBadSignature)
}

// pinnedKeys decodes pinnedSigningKeys, skipping malformed entries (another
// key may still verify; with none, verification fails closed).
func pinnedKeys() []ed25519.PublicKey {
	var keys []ed25519.PublicKey
	for _, s := range pinnedSigningKeys {
		b, err := base64.StdEncoding.DecodeString(s)
		if err == nil && len(b) == ed25519.PublicKeySize {
			keys = append(keys, ed25519.PublicKey(b))
		}
	}
	return keys
}

// redactURL drops credentials, query and fragment from a URL for logs and
// errors.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "<unparsable URL>"
	}
	if u.User != nil {
		u.User = url.User("xxxxx")
	}
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	return u.String()
}
