package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

var (
	// ErrNotFound means no live session has that key.
	ErrNotFound = errors.New("session not found")
	// ErrFull means every session slot is taken.
	ErrFull = errors.New("session limit reached")
	// ErrPrincipal means the session exists but belongs to another principal.
	// Callers should answer as for ErrNotFound, so that a session's existence
	// is not revealed to anyone else.
	ErrPrincipal = errors.New("session belongs to another principal")
	// ErrPrincipalFull means the principal already holds
	// RegistryOptions.MaxPerPrincipal sessions (reservations included).
	ErrPrincipalFull = errors.New("per-principal session limit reached")
)

// RegistryOptions configure a Registry.
type RegistryOptions struct {
	// Max caps live sessions plus reservations. If zero, 32.
	Max int
	// MaxPerPrincipal caps the live sessions plus reservations of one
	// principal (ReserveFor). If zero, only Max applies.
	MaxPerPrincipal int
	// New makes the session for a handle. Its browser is launched on first
	// use. Required.
	New func(handle string) *Session
	// Isolation ("browser" or "context") is logged when a session opens.
	Isolation string
	// Log receives session open/close logs; the zero value discards them.
	Log zerolog.Logger
	// OnClose, if set, runs after a session's browser is closed (DELETE,
	// idle expiry, shutdown) with its key and handle.
	OnClose func(key, handle string)
}

// Registry holds the live sessions of a multi-session transport, keyed by
// the transport's session key (the MCP session ID). Each session gets a
// separate handle (Session.ID) that is safe to log and to store in a
// backend. The registry enforces the session cap at reservation time, so a
// flood of new sessions is refused at once rather than queued.
//
// A Registry is safe for concurrent use.
type Registry struct {
	opts RegistryOptions
	log  zerolog.Logger

	mu      sync.Mutex
	byKey   map[string]*entry
	pending int
	// pendingBy counts reservations per principal (ReserveFor).
	pendingBy map[string]int
	closed    bool
}

type entry struct {
	key       string
	principal string
	sess      *Session
	handle    string    // the session's ID, safe to log
	created   time.Time // when the session was registered
	lastSeen  time.Time // when it last carried a request (under Registry.mu)
	gens      int       // browser generations launched so far (under Registry.mu)
	closing   bool
	done      chan struct{} // closed when the session is closed
}

// Stats are the registry's counters, as /readyz reports them.
type Stats struct {
	// Active counts sessions, including those being closed.
	Active int `json:"active"`
	// Pending counts reserved slots whose session is being set up.
	Pending int `json:"pending"`
	// Max is the cap on Active+Pending.
	Max int `json:"max"`
	// Available is Max-Active-Pending.
	Available int `json:"available"`
}

// NewRegistry returns an empty registry.
func NewRegistry(o RegistryOptions) *Registry {
	if o.Max <= 0 {
		o.Max = 32
	}
	return &Registry{opts: o, log: o.Log, byKey: map[string]*entry{}, pendingBy: map[string]int{}}
}

// Stats returns the current counters.
func (r *Registry) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statsLocked()
}

func (r *Registry) statsLocked() Stats {
	st := Stats{Active: len(r.byKey), Pending: r.pending, Max: r.opts.Max}
	st.Available = max(st.Max-st.Active-st.Pending, 0)
	if r.closed {
		st.Available = 0
	}
	return st
}

// Reservation is a session slot held while a new session is set up. Activate
// turns it into a session; Release gives the slot back. Exactly one of them
// takes effect.
type Reservation struct {
	r         *Registry
	principal string // counted in r.pendingBy unless ""
	mu        sync.Mutex
	used      bool
}

// Reserve takes a session slot, or fails with ErrFull when none is free and
// with ErrClosed after Shutdown. It is not counted against any principal.
func (r *Registry) Reserve() (*Reservation, error) { return r.ReserveFor("") }

// ReserveFor is Reserve on behalf of principal: it also fails, with
// ErrPrincipalFull, when principal already holds MaxPerPrincipal sessions
// and reservations. An empty principal is not counted.
func (r *Registry) ReserveFor(principal string) (*Reservation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	if r.statsLocked().Available == 0 {
		return nil, ErrFull
	}
	if principal != "" && r.opts.MaxPerPrincipal > 0 && r.principalCountLocked(principal) >= r.opts.MaxPerPrincipal {
		return nil, ErrPrincipalFull
	}
	r.pending++
	if principal != "" {
		r.pendingBy[principal]++
	}
	return &Reservation{r: r, principal: principal}, nil
}

// PrincipalSessions counts principal's sessions (those being closed
// included) and reservations.
func (r *Registry) PrincipalSessions(principal string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.principalCountLocked(principal)
}

func (r *Registry) principalCountLocked(principal string) int {
	n := r.pendingBy[principal]
	for _, e := range r.byKey {
		if e.principal == principal {
			n++
		}
	}
	return n
}

// unpendLocked gives back the reservation's pending counts.
func (res *Reservation) unpendLocked() {
	r := res.r
	r.pending--
	if res.principal != "" {
		if r.pendingBy[res.principal]--; r.pendingBy[res.principal] <= 0 {
			delete(r.pendingBy, res.principal)
		}
	}
}

// Release gives the slot back unless the reservation was activated.
func (res *Reservation) Release() {
	res.mu.Lock()
	defer res.mu.Unlock()
	if res.used {
		return
	}
	res.used = true
	res.r.mu.Lock()
	res.unpendLocked()
	res.r.mu.Unlock()
}

// Activate creates the session for key in the reserved slot, bound to
// principal. It fails if the reservation was already used, the key is taken
// or the registry is shut down; the slot is given back in every failure.
func (res *Reservation) Activate(key, principal string) (*Session, error) {
	return res.ActivateWith(key, principal, nil)
}

// ActivateWith is Activate with the session made by newSession instead of
// RegistryOptions.New (a session with settings of its own); nil means New.
func (res *Reservation) ActivateWith(key, principal string, newSession func(handle string) *Session) (*Session, error) {
	if newSession == nil {
		newSession = res.r.opts.New
	}
	res.mu.Lock()
	defer res.mu.Unlock()
	if res.used {
		return nil, errors.New("reservation already used")
	}
	res.used = true
	r := res.r
	handle := newHandle()
	now := time.Now()
	e := &entry{
		key: key, principal: principal, done: make(chan struct{}),
		handle: handle, created: now, lastSeen: now,
	}
	r.mu.Lock()
	res.unpendLocked()
	switch {
	case r.closed:
		r.mu.Unlock()
		return nil, ErrClosed
	case key == "" || r.byKey[key] != nil:
		r.mu.Unlock()
		return nil, fmt.Errorf("session key %q unusable", redactKey(key))
	}
	e.sess = newSession(handle)
	e.sess.principal = principal // before anyone else sees the session
	r.byKey[key] = e
	r.mu.Unlock()

	e.sess.OnGeneration(func(g *Generation) {
		r.mu.Lock()
		e.gens = g.N
		r.mu.Unlock()
	})
	r.log.Info().Str("session", handle).Str("principal", principal).Str("isolation", r.opts.Isolation).Msg("session opened")
	return e.sess, nil
}

// Lookup returns the live session for key if principal owns it, and marks
// it seen. It fails with ErrNotFound or ErrPrincipal.
func (r *Registry) Lookup(key, principal string) (*Session, error) {
	r.mu.Lock()
	e := r.byKey[key]
	if e == nil || e.closing {
		r.mu.Unlock()
		return nil, ErrNotFound
	}
	if e.principal != principal {
		r.mu.Unlock()
		return nil, ErrPrincipal
	}
	e.lastSeen = time.Now()
	r.mu.Unlock()
	return e.sess, nil
}

// Get returns the live session for key, whoever owns it (the transport has
// already checked the caller), or ErrNotFound.
func (r *Registry) Get(key string) (*Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.byKey[key]; e != nil && !e.closing {
		return e.sess, nil
	}
	return nil, ErrNotFound
}

// Has reports whether key names a live session.
func (r *Registry) Has(key string) bool {
	_, err := r.Get(key)
	return err == nil
}

// Close ends the session for key: it stops being found at once, then its
// browser is closed (temporary profile removed) and its slot freed. Close
// waits for that, also when another Close of the same key is under way.
// Closing an unknown key does nothing.
func (r *Registry) Close(key string) error {
	r.mu.Lock()
	e := r.byKey[key]
	if e == nil {
		r.mu.Unlock()
		return nil
	}
	if e.closing {
		r.mu.Unlock()
		<-e.done
		return nil
	}
	e.closing = true
	gens, lastSeen := e.gens, e.lastSeen
	r.mu.Unlock()

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), closeBudget)
	err := e.sess.Close(ctx)
	cancel()
	r.mu.Lock()
	delete(r.byKey, key)
	r.mu.Unlock()
	close(e.done)
	if r.opts.OnClose != nil {
		r.opts.OnClose(key, e.handle)
	}
	r.log.Info().Str("session", e.handle).Int("generations", gens).
		Dur("age", time.Since(e.created)).Dur("idle", time.Since(lastSeen)).
		Int64("ms", time.Since(start).Milliseconds()).Msg("session closed")
	return err
}

// Shutdown stops admission (Reserve fails with ErrClosed) and closes every
// session in parallel, waiting until they are closed or ctx ends.
func (r *Registry) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	keys := make([]string, 0, len(r.byKey))
	for k := range r.byKey {
		keys = append(keys, k)
	}
	r.mu.Unlock()
	errs := make(chan error, len(keys))
	for _, k := range keys {
		go func() { errs <- r.Close(k) }()
	}
	var all []error
	for range keys {
		select {
		case err := <-errs:
			all = append(all, err)
		case <-ctx.Done():
			return fmt.Errorf("close sessions: %w", ctx.Err())
		}
	}
	return errors.Join(all...)
}

// closeBudget bounds closing one session: its browser's dispose hooks
// (15 s) and dispose (10 s close, 5 s kill) with room to spare.
const closeBudget = 40 * time.Second

func newHandle() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "s-" + hex.EncodeToString(b[:])
}

// redactKey shortens a session key for messages: enough to tell keys
// apart, not enough to use one.
func redactKey(key string) string {
	if len(key) > 20 {
		return key[:20] + "…"
	}
	return key
}
