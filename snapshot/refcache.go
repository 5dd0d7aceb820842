package snapshot

import "sync"

// DefaultRefCacheSize is how many targets a RefCache holds by default.
const DefaultRefCacheSize = 50

// RefCacheEntry is what a RefCache keeps for one target: what re-resolves
// the refs of its last snapshot of each mode on a page object that did not
// take it (a second connection to the same browser). Entries are read-only
// once stored; a nil field means no snapshot of that mode.
type RefCacheEntry struct {
	// AI maps the refs of the last AI snapshot to getByRole arguments
	// (AIRefs).
	AI map[string]RoleRef
	// Role is the last Role tree (its RoleRef resolves r12).
	Role *Tree
	// ARIA is the last ARIA tree (its Backend resolves ax12: backend node
	// ids are the renderer's, the same on every connection).
	ARIA *Tree
}

// RefCache keeps the last snapshot refs of each browser target, keyed by
// CacheKey(cdpURL, targetID), so that a new page object for the same target
// can resolve refs taken before it appeared. When full, Put evicts the key
// inserted first (FIFO: storing an existing key again replaces its entry
// but keeps its place in line).
//
// The zero value is an empty cache of DefaultRefCacheSize entries. A
// RefCache is safe for concurrent use.
type RefCache struct {
	// Size is the most targets kept. If zero or less, DefaultRefCacheSize.
	// Set it before first use.
	Size int

	mu      sync.Mutex
	entries map[string]RefCacheEntry
	order   []string // keys, oldest insertion first
}

// CacheKey returns the cache key of a target: "<cdpURL>::<targetID>".
func CacheKey(cdpURL, targetID string) string {
	return cdpURL + "::" + targetID
}

// Put stores the entry of key.
func (c *RefCache) Put(key string, e RefCacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = make(map[string]RefCacheEntry)
	}
	if _, ok := c.entries[key]; ok {
		c.entries[key] = e
		return
	}
	size := c.Size
	if size <= 0 {
		size = DefaultRefCacheSize
	}
	for len(c.order) >= size {
		delete(c.entries, c.order[0])
		c.order[0] = ""
		c.order = c.order[1:]
	}
	c.entries[key] = e
	c.order = append(c.order, key)
}

// Get returns the entry of key.
func (c *RefCache) Get(key string) (RefCacheEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	return e, ok
}

// Delete forgets key (a closed target).
func (c *RefCache) Delete(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok {
		return
	}
	delete(c.entries, key)
	for i, k := range c.order {
		if k == key {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}

// Len returns the number of targets held.
func (c *RefCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
