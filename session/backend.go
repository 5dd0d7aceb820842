package session

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Metadata is what a Backend stores about a session: facts for operators and
// for routing, never browser state. A backend cannot revive a browser; the
// process that owns the browser decides whether it is alive.
type Metadata struct {
	// ID is the session's handle (Session.ID), not its MCP session ID.
	ID string `json:"id"`
	// Created is when the session was registered.
	Created time.Time `json:"created"`
	// LastSeen is when the session last carried a request.
	LastSeen time.Time `json:"lastSeen"`
	// Principal names who created the session (a digest of its bearer
	// token, or "anonymous"); never the token itself.
	Principal string `json:"principal"`
	// Isolation is "browser" or "context".
	Isolation string `json:"isolation"`
	// Generations counts the browser generations launched so far.
	Generations int `json:"generations"`
}

// Backend stores session metadata. Implementations must be safe for
// concurrent use.
type Backend interface {
	// Put creates or replaces the metadata of m.ID.
	Put(ctx context.Context, m Metadata) error
	// Get returns the metadata of id, or ErrNotFound.
	Get(ctx context.Context, id string) (Metadata, error)
	// List returns every stored session, oldest first.
	List(ctx context.Context) ([]Metadata, error)
	// Delete removes id; deleting an unknown id is not an error.
	Delete(ctx context.Context, id string) error
}

// MemoryBackend is the built-in Backend: a map in this process.
type MemoryBackend struct {
	mu sync.Mutex
	m  map[string]Metadata
}

// NewMemoryBackend returns an empty MemoryBackend.
func NewMemoryBackend() *MemoryBackend { return &MemoryBackend{m: map[string]Metadata{}} }

// Put implements Backend.
func (b *MemoryBackend) Put(_ context.Context, m Metadata) error {
	b.mu.Lock()
	b.m[m.ID] = m
	b.mu.Unlock()
	return nil
}

// Get implements Backend.
func (b *MemoryBackend) Get(_ context.Context, id string) (Metadata, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m, ok := b.m[id]
	if !ok {
		return Metadata{}, ErrNotFound
	}
	return m, nil
}

// List implements Backend.
func (b *MemoryBackend) List(_ context.Context) ([]Metadata, error) {
	b.mu.Lock()
	out := make([]Metadata, 0, len(b.m))
	for _, m := range b.m {
		out = append(out, m)
	}
	b.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

// Delete implements Backend.
func (b *MemoryBackend) Delete(_ context.Context, id string) error {
	b.mu.Lock()
	delete(b.m, id)
	b.mu.Unlock()
	return nil
}
