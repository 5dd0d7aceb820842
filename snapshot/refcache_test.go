package snapshot

import (
	"fmt"
	"sync"
	"testing"
)

func TestRefCache(t *testing.T) {
	entry := func(i int) RefCacheEntry {
		return RefCacheEntry{AI: map[string]RoleRef{"e1": {Role: "button", Name: fmt.Sprint(i)}}}
	}
	name := func(e RefCacheEntry) string { return e.AI["e1"].Name }

	tests := []struct {
		name    string
		size    int
		run     func(c *RefCache)
		present []string
		absent  []string
	}{
		{"default size evicts the oldest of 51", 0, func(c *RefCache) {
			for i := 0; i < 51; i++ {
				c.Put(CacheKey("ws://cdp", fmt.Sprint("T", i)), entry(i))
			}
		}, []string{"ws://cdp::T1", "ws://cdp::T50"}, []string{"ws://cdp::T0"}},
		{"updating a key keeps its place (FIFO, not LRU)", 2, func(c *RefCache) {
			c.Put("a", entry(1))
			c.Put("b", entry(2))
			c.Put("a", entry(3))
			c.Put("c", entry(4))
		}, []string{"b", "c"}, []string{"a"}},
		{"reading does not refresh", 2, func(c *RefCache) {
			c.Put("a", entry(1))
			c.Put("b", entry(2))
			c.Get("a")
			c.Put("c", entry(3))
		}, []string{"b", "c"}, []string{"a"}},
		{"delete frees a place", 2, func(c *RefCache) {
			c.Put("a", entry(1))
			c.Put("b", entry(2))
			c.Delete("a")
			c.Delete("missing")
			c.Put("c", entry(3))
		}, []string{"b", "c"}, []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &RefCache{Size: tc.size}
			tc.run(c)
			for _, k := range tc.present {
				if _, ok := c.Get(k); !ok {
					t.Errorf("%s missing", k)
				}
			}
			for _, k := range tc.absent {
				if _, ok := c.Get(k); ok {
					t.Errorf("%s still cached", k)
				}
			}
			want := tc.size
			if want == 0 {
				want = DefaultRefCacheSize
			}
			if c.Len() != want {
				t.Errorf("Len = %d, want %d", c.Len(), want)
			}
		})
	}

	var c RefCache
	c.Put("k", entry(1))
	c.Put("k", entry(2))
	if e, _ := c.Get("k"); name(e) != "2" {
		t.Errorf("Get after update = %q, want the new entry", name(e))
	}
	if CacheKey("http://127.0.0.1:9222", "ABC") != "http://127.0.0.1:9222::ABC" {
		t.Error("CacheKey shape")
	}
}

func TestRefCacheConcurrent(t *testing.T) {
	c := &RefCache{Size: 8}
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				k := fmt.Sprint(g, "::", i%20)
				c.Put(k, RefCacheEntry{})
				c.Get(k)
				if i%7 == 0 {
					c.Delete(k)
				}
			}
		}()
	}
	wg.Wait()
	if n := c.Len(); n > 8 {
		t.Errorf("Len = %d, above the size", n)
	}
	if len(c.order) != c.Len() {
		t.Errorf("order holds %d keys for %d entries", len(c.order), c.Len())
	}
}
