package fleet

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// HeaderForwarded marks a request one instance forwarded to another. Its
// value is the cluster secret: an owner accepts it only when it matches,
// and never forwards such a request again (no loops).
const HeaderForwarded = "X-Cloakbrowser-Cluster"

// HeaderRefused is set on the 403 an instance answers to a forward whose
// cluster secret is not its own, so the forwarding instance can tell that
// refusal from any other 403 and log it.
const HeaderRefused = "X-Cloakbrowser-Cluster-Refused"

// Forwarder sends requests for sessions other instances own to them.
type Forwarder struct {
	secret [32]byte
	raw    string
	path   string
	onDead func(w http.ResponseWriter, r *http.Request, err error)

	// OnRefused, if set, is called when an owner refused a forward because
	// the cluster secrets differ (its 403 carries HeaderRefused); owner is
	// the owner's advertised URL. The 403 still reaches the client.
	OnRefused func(owner string)

	mu      sync.Mutex
	proxies map[string]*httputil.ReverseProxy
	tr      *http.Transport
}

// NewForwarder forwards to <owner URL><path>, authenticated by secret.
// onDead answers when the owner cannot be reached (it died or is
// partitioned); it is called after a short connect timeout, never later.
func NewForwarder(secret, path string, onDead func(w http.ResponseWriter, r *http.Request, err error)) *Forwarder {
	return &Forwarder{
		secret: sha256.Sum256([]byte(secret)), raw: secret, path: path, onDead: onDead,
		proxies: map[string]*httputil.ReverseProxy{},
		tr: &http.Transport{
			Proxy:               nil, // instances talk directly, never through HTTP_PROXY
			DialContext:         (&net.Dialer{Timeout: time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
			// No ResponseHeaderTimeout: tool calls and GET streams may take long.
		},
	}
}

// Authentic reports whether r was forwarded by an instance that knows the
// cluster secret; ok is false when r carries no forwarding header at all.
func (f *Forwarder) Authentic(r *http.Request) (forwarded, ok bool) {
	v := r.Header.Get(HeaderForwarded)
	if v == "" {
		return false, false
	}
	got := sha256.Sum256([]byte(v))
	return true, subtle.ConstantTimeCompare(got[:], f.secret[:]) == 1
}

// Forward proxies r to the owner at base (its advertised URL), streaming
// the response (SSE included) unbuffered.
func (f *Forwarder) Forward(w http.ResponseWriter, r *http.Request, base string) {
	p, err := f.proxy(base)
	if err != nil {
		f.onDead(w, r, err)
		return
	}
	p.ServeHTTP(w, r)
}

func (f *Forwarder) proxy(base string) (*httputil.ReverseProxy, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.proxies[base]; ok {
		return p, nil
	}
	target, err := url.Parse(base)
	if err != nil || target.Host == "" {
		return nil, errors.New("the owner's advertised URL is not valid")
	}
	target.Path = f.path
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = target.Scheme
			pr.Out.URL.Host = target.Host
			pr.Out.URL.Path = target.Path
			pr.Out.Host = target.Host
			pr.Out.Header.Set(HeaderForwarded, f.raw)
			pr.SetXForwarded()
		},
		Transport:     f.tr,
		FlushInterval: -1, // SSE: every event goes out as it arrives
		ErrorHandler:  f.onDead,
		ModifyResponse: func(resp *http.Response) error {
			if resp.StatusCode == http.StatusForbidden && resp.Header.Get(HeaderRefused) != "" && f.OnRefused != nil {
				f.OnRefused(base)
			}
			return nil
		},
	}
	f.proxies[base] = p
	return p, nil
}

// Close drops idle connections to other instances.
func (f *Forwarder) Close() { f.tr.CloseIdleConnections() }
