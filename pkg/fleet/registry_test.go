package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/fleet"
)

func open(t *testing.T, rd *mcptest.Redis, advertise string, max int) *fleet.Registry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := fleet.Open(ctx, fleet.Options{RedisURL: rd.URL(), Prefix: "t:", Advertise: advertise,
		TTL: 600 * time.Millisecond, MaxPerPrincipal: max, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	return r
}

func session(t *testing.T, r *fleet.Registry, sid, principal string) {
	t.Helper()
	ctx := context.Background()
	res, err := r.Reserve(ctx, principal)
	if err != nil {
		t.Fatalf("reserve %s for %s: %v", sid, principal, err)
	}
	if err := res.Commit(ctx, sid); err != nil {
		t.Fatal(err)
	}
}

func TestRegistryLookupAndRelease(t *testing.T) {
	rd := mcptest.StartRedis(t)
	a := open(t, rd, "http://127.0.0.1:1", 0)
	b := open(t, rd, "http://127.0.0.1:2", 0)
	ctx := context.Background()
	session(t, a, "s1", "t-aaa")
	rec, err := b.Lookup(ctx, "s1")
	if err != nil || rec.Owner != a.ID() || rec.URL != "http://127.0.0.1:1" || rec.Principal != "t-aaa" {
		t.Fatalf("lookup from b: %+v, %v", rec, err)
	}
	if _, err := b.Lookup(ctx, "nope"); !errors.Is(err, fleet.ErrNotFound) {
		t.Fatalf("unknown session: %v, want ErrNotFound", err)
	}
	a.Release(ctx, "s1")
	if _, err := b.Lookup(ctx, "s1"); !errors.Is(err, fleet.ErrNotFound) {
		t.Fatalf("released session: %v, want ErrNotFound", err)
	}
	if got := rd.Do("EXISTS", "t:sess:s1"); got != ":0" {
		t.Fatalf("record left after release: EXISTS = %s", got)
	}
}

func TestRegistryQuotaFleetWide(t *testing.T) {
	rd := mcptest.StartRedis(t)
	a := open(t, rd, "http://127.0.0.1:1", 2)
	b := open(t, rd, "http://127.0.0.1:2", 2)
	ctx := context.Background()
	session(t, a, "s1", "t-a")
	session(t, b, "s2", "t-a")
	if _, err := a.Reserve(ctx, "t-a"); !errors.Is(err, fleet.ErrQuota) {
		t.Fatalf("third session of t-a on a: %v, want ErrQuota", err)
	}
	if _, err := b.Reserve(ctx, "t-a"); !errors.Is(err, fleet.ErrQuota) {
		t.Fatalf("third session of t-a on b: %v, want ErrQuota", err)
	}
	session(t, b, "s3", "t-b") // another principal is not affected
	// A cancelled reservation gives its slot back; so does a release.
	b.Release(ctx, "s2")
	res, err := a.Reserve(ctx, "t-a")
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	res.Cancel(ctx)
	session(t, a, "s4", "t-a")
}

func TestRegistryDeadOwner(t *testing.T) {
	rd := mcptest.StartRedis(t)
	a := open(t, rd, "http://127.0.0.1:1", 1)
	ctx := context.Background()
	// An instance that was SIGKILLed: its records are in Redis, its
	// heartbeat key expired (it never beats again).
	rd.Do("SADD", "t:instances", "dead1")
	rd.Do("HSET", "t:sess:s1", "owner", "dead1", "url", "http://127.0.0.1:2", "principal", "t-a")
	rd.Do("SADD", "t:inst-sess:dead1", "s1", "s9")
	rd.Do("HSET", "t:sess:s9", "owner", "dead1", "url", "http://127.0.0.1:2", "principal", "t-b")
	rd.Do("ZADD", "t:principal:t-a", "1", "s1|dead1")
	if _, err := a.Lookup(ctx, "s1"); !errors.Is(err, fleet.ErrNotFound) {
		t.Fatalf("dead owner: %v, want ErrNotFound", err)
	}
	if got := rd.Do("EXISTS", "t:sess:s1"); got != ":0" {
		t.Fatalf("record left after the lookup found its owner dead: EXISTS = %s", got)
	}
	// The dead owner's quota entry does not count: t-a (cap 1) gets one.
	session(t, a, "s2", "t-a")
	// The sweeper removes everything else the dead instance left.
	testtier.EventuallyState(t, 5*time.Second, "the sweeper to remove the dead instance's records", func() (bool, string) {
		member, sess := rd.Do("SISMEMBER", "t:instances", "dead1"), rd.Do("EXISTS", "t:sess:s9")
		return member == ":0" && sess == ":0", fmt.Sprintf("SISMEMBER instances dead1 = %s, EXISTS sess:s9 = %s", member, sess)
	})
}

func TestRegistryRedisLostAndBack(t *testing.T) {
	rd := mcptest.StartRedis(t)
	a := open(t, rd, "http://127.0.0.1:1", 0)
	ctx := context.Background()
	session(t, a, "s1", "t-a")
	rd.Stop()
	if _, err := a.Reserve(ctx, "t-a"); !errors.Is(err, fleet.ErrUnavailable) {
		t.Fatalf("reserve with Redis down: %v, want ErrUnavailable", err)
	}
	if a.Healthy() {
		t.Fatal("Healthy() with Redis down")
	}
	rd.Start() // empty: no persistence
	testtier.EventuallyState(t, 5*time.Second, "the registry to recover (healthy, s1 published again)", func() (bool, string) {
		healthy, exists := a.Healthy(), rd.Do("EXISTS", "t:sess:s1")
		return healthy && exists == ":1", fmt.Sprintf("healthy=%v, sess:s1 exists=%s", healthy, exists)
	})
	session(t, a, "s2", "t-a")
}

func TestRegistryOpenRefusesWithoutRedis(t *testing.T) {
	rd := mcptest.StartRedis(t)
	rd.Stop()
	_, err := fleet.Open(context.Background(), fleet.Options{RedisURL: rd.URL(), Advertise: "http://127.0.0.1:1"})
	if err == nil {
		t.Fatal("Open succeeded without Redis")
	}
	if want := "127.0.0.1:" + strconv.Itoa(rd.Port); !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--redis-url") {
		t.Fatalf("error %q should name %s and --redis-url", err, want)
	}
	if _, err := fleet.Open(context.Background(), fleet.Options{RedisURL: "http://x", Advertise: "http://127.0.0.1:1"}); err == nil || !strings.Contains(err.Error(), "redis://") {
		t.Fatalf("bad URL: %v", err)
	}
}

func TestRegistryGracefulClose(t *testing.T) {
	rd := mcptest.StartRedis(t)
	a := open(t, rd, "http://127.0.0.1:1", 0)
	ctx := context.Background()
	b, err := fleet.Open(ctx, fleet.Options{RedisURL: rd.URL(), Prefix: "t:", Advertise: "http://127.0.0.1:2", TTL: time.Minute, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	session(t, b, "s1", "t-a")
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Lookup(ctx, "s1"); !errors.Is(err, fleet.ErrNotFound) {
		t.Fatalf("after graceful close: %v, want ErrNotFound at once", err)
	}
	if got := rd.Do("EXISTS", "t:inst:"+b.ID()); got != ":0" {
		t.Fatalf("heartbeat left after Close: %s", got)
	}
}

func TestRegistryLoad(t *testing.T) {
	rd := mcptest.StartRedis(t)
	a := open(t, rd, "http://127.0.0.1:1", 0)
	b := open(t, rd, "http://127.0.0.1:2", 0)
	a.AddLoad("ws://e1", 1)
	a.AddLoad("ws://e1", 1)
	b.AddLoad("ws://e2", 1)
	testtier.EventuallyState(t, 5*time.Second, "the fleet load e1:2 e2:1", func() (bool, string) {
		m, err := a.Load(context.Background())
		return err == nil && m["ws://e1"] == 2 && m["ws://e2"] == 1, fmt.Sprintf("load = %v, %v", m, err)
	})
}

// waitHeartbeat returns just after the registry's next heartbeat renewed
// its key (its PTTL went up).
func waitHeartbeat(t *testing.T, rd *mcptest.Redis, key string) {
	t.Helper()
	last := rd.Do("PTTL", key)
	testtier.EventuallyState(t, 10*time.Second, "a heartbeat renewing "+key, func() (bool, string) {
		now := rd.Do("PTTL", key)
		a, _ := strconv.Atoi(strings.TrimPrefix(last, ":"))
		b, _ := strconv.Atoi(strings.TrimPrefix(now, ":"))
		renewed := b > a
		last = now
		return renewed, "PTTL " + now
	})
}

// TestRegistryRedisRestartBetweenHeartbeats: Redis restarts (empty) between
// two heartbeats, so no round trip of the registry ever fails; the next
// heartbeat still finds its key gone, publishes the local sessions again
// and says so in one line.
func TestRegistryRedisRestartBetweenHeartbeats(t *testing.T) {
	rd := mcptest.StartRedis(t)
	var log mcptest.SyncBuffer
	const ttl = 3 * time.Second // a heartbeat every second: the restart fits between two
	r, err := fleet.Open(context.Background(), fleet.Options{RedisURL: rd.URL(), Prefix: "t:", Advertise: "http://127.0.0.1:1",
		TTL: ttl, Log: zerolog.New(&log)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	session(t, r, "s1", "t-a")

	waitHeartbeat(t, rd, "t:inst:"+r.ID())
	rd.Restart()
	if got := rd.Do("EXISTS", "t:sess:s1"); got != ":0" {
		t.Fatalf("Redis kept s1 across a restart without persistence: %s", got)
	}
	testtier.EventuallyState(t, 2*ttl, "s1, its owner and its quota entry published again", func() (bool, string) {
		owner := rd.Value("HGET", "t:sess:s1", "owner")
		member := rd.Do("ZSCORE", "t:principal:t-a", "s1|"+r.ID())
		return owner == r.ID() && member != "$-1", fmt.Sprintf("owner %q, quota entry %s", owner, member)
	})
	if n := strings.Count(log.String(), "Redis had lost this instance's records"); n != 1 {
		t.Fatalf("the republish is said %d times, want once:\n%s", n, log.String())
	}
}

// TestRegistryRedisLogsJSON: go-redis's own lines (its dial failures while
// Redis is gone) go to the registry's logger as JSON, tagged
// component=redis, not as plain text to stderr.
func TestRegistryRedisLogsJSON(t *testing.T) {
	rd := mcptest.StartRedis(t)
	var log mcptest.SyncBuffer
	r, err := fleet.Open(context.Background(), fleet.Options{RedisURL: rd.URL(), Prefix: "t:", Advertise: "http://127.0.0.1:1",
		TTL: 600 * time.Millisecond, Log: zerolog.New(&log).Level(zerolog.DebugLevel)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	rd.Stop()
	testtier.EventuallyState(t, 10*time.Second, "a go-redis line in the registry's log", func() (bool, string) {
		return strings.Contains(log.String(), `"component":"redis"`), log.String()
	})
	for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		if !json.Valid([]byte(l)) {
			t.Fatalf("not a JSON line: %q", l)
		}
	}
	rd.Start()
}
