package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/fleet"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/httpguard"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// openFleet joins the fleet when --http-session-backend is redis: the
// registry (heartbeats, session records, the fleet-wide per-principal
// quota) and the forwarder to other instances.
func (t *httpTransport) openFleet(ctx context.Context, ln net.Listener, scheme string) error {
	cfg := t.cfg
	if cfg.SessionBackend != "redis" {
		return nil
	}
	advertise := cfg.ClusterAdvertiseURL
	if advertise == "" {
		ta, ok := ln.Addr().(*net.TCPAddr)
		if !ok || ta.IP.IsUnspecified() {
			return fmt.Errorf("--http-session-backend redis: the listen address %s names no host other instances can reach; set --cluster-advertise-url (e.g. http://10.0.0.5:%d)", ln.Addr(), portOf(ln.Addr()))
		}
		advertise = scheme + "://" + ln.Addr().String()
	}
	// Requests other instances forward carry the advertised host (e.g.
	// mcp-a:8931 or a pod IP) as Host: accept it like our own name.
	if err := t.policy.AllowAdvertised(advertise); err != nil {
		return err
	}
	reg, err := fleet.Open(ctx, fleet.Options{
		RedisURL:        cfg.RedisURL,
		Prefix:          cfg.RedisKeyPrefix,
		Advertise:       advertise,
		TTL:             cfg.ClusterHeartbeatTTL,
		MaxPerPrincipal: cfg.SessionMaxPerPrincipal,
		Log:             t.s.log.With().Str("component", "fleet").Logger(),
	})
	if err != nil {
		return err
	}
	t.fleet = reg
	t.fwd = fleet.NewForwarder(cfg.ClusterSecret, cfg.Endpoint, func(w http.ResponseWriter, r *http.Request, err error) {
		t.s.log.Warn().Err(err).Str("method", r.Method).Msg("fleet: the instance owning a session did not answer")
		httpguard.WriteError(w, http.StatusServiceUnavailable, nil, mcp.INTERNAL_ERROR,
			"Service Unavailable: the server instance that owns this session does not answer; retry, or send initialize to start a new session")
	})
	t.fwd.OnRefused = func(owner string) {
		t.s.log.Warn().Str("owner", owner).Msg("fleet: the instance owning a session refused our forward: its --cluster-secret differs from this instance's")
	}
	return nil
}

// forwardOrRefuse handles a request for a session this instance does not
// have: it forwards it to the instance that owns it, or answers 404 (gone,
// another principal's) or 503 (the registry is down). It reports false
// when there is no fleet, leaving the answer to the caller.
func (t *httpTransport) forwardOrRefuse(w http.ResponseWriter, r *http.Request, sid, principal string, id []byte) bool {
	if t.fleet == nil {
		return false
	}
	notFound := func() {
		httpguard.WriteError(w, http.StatusNotFound, id, codeSessionNotFound, msgSessionNotFound)
	}
	if forwarded, _ := t.fwd.Authentic(r); forwarded {
		// refuseForgedForward let it through: the secret is right. Forwarded
		// to us but not ours (any more): never forward twice.
		notFound()
		return true
	}
	rec, err := t.fleet.Lookup(r.Context(), sid)
	switch {
	case errors.Is(err, fleet.ErrUnavailable):
		httpguard.WriteError(w, http.StatusServiceUnavailable, id, mcp.INTERNAL_ERROR,
			"Service Unavailable: the session registry (Redis) cannot be reached, so this instance cannot find the session's owner; retry shortly")
		return true
	case err != nil, rec.Owner == t.fleet.ID():
		notFound()
		return true
	case rec.Principal != principal:
		t.s.log.Warn().Str("principal", principal).Str("method", r.Method).Msg("MCP request refused: session belongs to another principal (fleet)")
		notFound()
		return true
	}
	t.fwd.Forward(w, r, rec.URL)
	return true
}

// msgBadClusterSecret answers a forwarded request whose cluster secret is
// not ours. The client sees it through the forwarding instance, so it says
// what the operator must fix.
const msgBadClusterSecret = "Forbidden: this request was forwarded by another server instance whose --cluster-secret differs from this one's; every instance of the fleet needs the same --cluster-secret"

// refuseForgedForward answers 403 to a request that carries the forwarding
// header with a secret other than ours, whatever session it names (one of
// ours included), and logs it once. It reports whether it answered. Without
// a fleet the header means nothing and is ignored.
func (t *httpTransport) refuseForgedForward(w http.ResponseWriter, r *http.Request) bool {
	if t.fleet == nil {
		return false
	}
	forwarded, ok := t.fwd.Authentic(r)
	if !forwarded || ok {
		return false
	}
	t.s.log.Warn().Str("remote", r.RemoteAddr).Str("method", r.Method).
		Msg("fleet: refused a forwarded request: its cluster secret is not this instance's (--cluster-secret differs between instances, or the header was forged)")
	w.Header().Set(fleet.HeaderRefused, "cluster-secret")
	httpguard.WriteError(w, http.StatusForbidden, nil, mcp.INVALID_REQUEST, msgBadClusterSecret)
	return true
}

// fleetReserve takes a fleet-wide quota slot for a new session of
// principal; ok false means the answer (503) was written.
func (t *httpTransport) fleetReserve(w http.ResponseWriter, r *http.Request, principal string, id []byte) (*fleet.Reservation, bool) {
	if t.fleet == nil {
		return nil, true
	}
	res, err := t.fleet.Reserve(r.Context(), principal)
	switch {
	case errors.Is(err, fleet.ErrQuota):
		w.Header().Set("Retry-After", "30")
		httpguard.WriteError(w, http.StatusServiceUnavailable, id, mcp.INTERNAL_ERROR, "Service Unavailable: "+err.Error())
		return nil, false
	case err != nil:
		w.Header().Set("Retry-After", "5")
		httpguard.WriteError(w, http.StatusServiceUnavailable, id, mcp.INTERNAL_ERROR,
			"Service Unavailable: the session registry (Redis) cannot be reached, so no new session can start; existing sessions keep working; retry shortly")
		return nil, false
	}
	return res, true
}

// closeFleet leaves the fleet: this instance's records go at once.
func (t *httpTransport) closeFleet(ctx context.Context) error {
	if t.fleet == nil {
		return nil
	}
	t.fwd.Close()
	return t.fleet.Close(ctx)
}

// browserPool hands HTTP sessions remote browsers from
// --browser-endpoint-pool, least-loaded first (fleet-wide when there is a
// fleet registry).
type browserPool struct {
	endpoints []string
	reg       *fleet.Registry // nil: local counts only

	mu    sync.Mutex
	local map[string]int
}

func newBrowserPool(endpoints []string, reg *fleet.Registry) *browserPool {
	if len(endpoints) == 0 {
		return nil
	}
	return &browserPool{endpoints: endpoints, reg: reg, local: map[string]int{}}
}

// pick returns the least-loaded endpoint other than exclude (when there is
// another) and counts a session on it.
func (p *browserPool) pick(ctx context.Context, exclude string) string {
	var load map[string]int
	if p.reg != nil {
		load, _ = p.reg.Load(ctx) // Redis down: this instance's counts still apply
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if load == nil {
		load = p.local
	}
	best := ""
	for _, e := range p.endpoints {
		if e == exclude && len(p.endpoints) > 1 {
			continue
		}
		if best == "" || load[e] < load[best] {
			best = e
		}
	}
	p.local[best]++
	if p.reg != nil {
		p.reg.AddLoad(best, 1)
	}
	return best
}

func (p *browserPool) release(endpoint string) {
	if endpoint == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.local[endpoint]--; p.local[endpoint] <= 0 {
		delete(p.local, endpoint)
	}
	if p.reg != nil {
		p.reg.AddLoad(endpoint, -1)
	}
}

// seat is one session's place in the pool: it keeps its endpoint across
// generations and moves only when that endpoint cannot be reached.
type seat struct {
	pool *browserPool
	mu   sync.Mutex
	cur  string
}

func (s *seat) pick(ctx context.Context, failed string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != "" && failed == "" {
		return s.cur, nil
	}
	old := s.cur
	s.cur = s.pool.pick(ctx, failed)
	s.pool.release(old)
	return s.cur, nil
}

func (s *seat) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pool.release(s.cur)
	s.cur = ""
}

// sessionFactory makes the registry's sessions: with a pool, each gets a
// seat (released when the session closes, see releaseSeat).
func (t *httpTransport) sessionFactory(base session.Config) func(handle string) *session.Session {
	return func(handle string) *session.Session { return t.newSession(handle, base) }
}

// newSession makes the session for handle from cfg: with a pool, on a seat
// of its own in it.
func (t *httpTransport) newSession(handle string, cfg session.Config) *session.Session {
	if t.pool == nil {
		return session.New(handle, t.s.drv, cfg)
	}
	st := &seat{pool: t.pool}
	cfg.PickEndpoint = st.pick
	t.seatsMu.Lock()
	t.seats[handle] = st
	t.seatsMu.Unlock()
	return session.New(handle, t.s.drv, cfg)
}

// holdProfile keeps a session's profile claim until the session is closed.
func (t *httpTransport) holdProfile(handle string, release func()) {
	t.profileMu.Lock()
	defer t.profileMu.Unlock()
	if t.profileHeld == nil {
		t.profileHeld = map[string]func(){}
	}
	t.profileHeld[handle] = release
}

// releaseProfile gives back the profile claim of a closed session.
func (t *httpTransport) releaseProfile(handle string) {
	t.profileMu.Lock()
	release := t.profileHeld[handle]
	delete(t.profileHeld, handle)
	t.profileMu.Unlock()
	if release != nil {
		release()
	}
}

func (t *httpTransport) releaseSeat(handle string) {
	if t.pool == nil {
		return
	}
	t.seatsMu.Lock()
	st := t.seats[handle]
	delete(t.seats, handle)
	t.seatsMu.Unlock()
	if st != nil {
		st.release()
	}
}

// withRegistry adds the fleet registry's state to a probe's answer:
// "registry": "ok" or "unreachable" (Redis did not answer the last round
// trip: new sessions and forwarding get 503 until it returns; local
// sessions keep working). Without a fleet the answer is unchanged.
func (t *httpTransport) withRegistry(m map[string]any) map[string]any {
	if t.fleet == nil {
		return m
	}
	m["registry"] = "ok"
	if !t.fleet.Healthy() {
		m["registry"] = "unreachable"
	}
	return m
}
