// Package fleet lets several server instances share their HTTP sessions
// through Redis: a registry of which instance owns which session (hints
// with heartbeats, never the truth about a browser), a fleet-wide
// per-principal session quota, and a forwarder that sends a request for a
// session another instance owns to that instance.
//
// Key layout (every key starts with Options.Prefix):
//
//	inst:<id>          string  the instance's advertised URL, expires after TTL
//	                           unless its heartbeat renews it
//	instances          set     every instance id that registered
//	inst-sess:<id>     set     the session ids an instance owns
//	sess:<sid>         hash    owner, url, principal, created
//	principal:<p>      zset    "<sid>|<owner>" members: a principal's sessions
//	                           fleet-wide (the quota counts them)
//	inst-load:<id>     hash    browser pool endpoint → sessions this instance
//	                           attached to it, expires with the heartbeat
//
// The quota script reads keys it is not passed (each member's owner
// heartbeat), so the layout needs one Redis (or Sentinel), not Redis
// Cluster.
package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

var (
	// ErrUnavailable means Redis cannot be reached: new sessions and
	// forwarding wait for it to return; local sessions keep working.
	ErrUnavailable = errors.New("the session registry (Redis) is unavailable")
	// ErrQuota means the principal already has its fleet-wide share of
	// sessions.
	ErrQuota = errors.New("fleet-wide session quota reached")
	// ErrNotFound means no live instance owns the session: it was closed,
	// its owner died, or it never existed.
	ErrNotFound = errors.New("session not found in the fleet")
)

// Options configure a Registry.
type Options struct {
	// RedisURL is a redis:// or rediss:// URL (TLS, user and password come
	// from it).
	RedisURL string
	// Prefix starts every key, so fleets can share one Redis. If empty,
	// "cloakbrowser-mcp:".
	Prefix string
	// Advertise is the base URL other instances reach this one at
	// (http://host:port); forwarded requests go to Advertise + the MCP path.
	Advertise string
	// TTL is how long an instance counts as alive after its last heartbeat;
	// heartbeats are sent every TTL/3. If zero, 5 s.
	TTL time.Duration
	// MaxPerPrincipal caps one principal's sessions across the fleet. If
	// zero, no cap.
	MaxPerPrincipal int
	// Log receives registry events (never tokens or secrets).
	Log zerolog.Logger
}

// Record is what Redis knows of a session.
type Record struct {
	ID        string
	Owner     string // instance id
	URL       string // the owner's advertised base URL
	Principal string
	Created   time.Time
}

// Registry is one instance's view of the fleet.
type Registry struct {
	rdb    *redis.Client
	opts   Options
	id     string
	prefix string
	log    zerolog.Logger

	mu      sync.Mutex
	local   map[string]string // sid → principal: what this instance owns
	load    map[string]int    // browser pool endpoint → local sessions on it
	healthy bool
	stop    chan struct{}
	done    chan struct{}
}

// Open connects to Redis and registers this instance. It fails when Redis
// cannot be reached: a fleet member without its registry would answer 404
// for every session another instance owns.
func Open(ctx context.Context, o Options) (*Registry, error) {
	if o.Prefix == "" {
		o.Prefix = "cloakbrowser-mcp:"
	}
	if o.TTL <= 0 {
		o.TTL = 5 * time.Second
	}
	if _, err := url.Parse(o.Advertise); err != nil || o.Advertise == "" {
		return nil, fmt.Errorf("fleet: advertised URL %q is not a URL like http://10.0.0.5:8931", o.Advertise)
	}
	opt, err := redis.ParseURL(o.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("--redis-url: %w (want redis://[user:password@]host:port[/db] or rediss:// for TLS)", err)
	}
	setRedisLogger(o.Log)
	// Nothing may wait on Redis for long: the registry is a hint.
	opt.DialTimeout = time.Second
	opt.ReadTimeout = time.Second
	opt.WriteTimeout = time.Second
	opt.MaxRetries = 1
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	r := &Registry{
		rdb: redis.NewClient(opt), opts: o, id: hex.EncodeToString(b), prefix: o.Prefix,
		log: o.Log, local: map[string]string{}, load: map[string]int{}, stop: make(chan struct{}), done: make(chan struct{}),
	}
	if _, _, err := r.beat(ctx); err != nil {
		_ = r.rdb.Close()
		return nil, fmt.Errorf("redis at %s is unreachable (%w): start it or fix --redis-url", opt.Addr, err)
	}
	r.healthy = true
	go r.run()
	r.log.Info().Str("instance", r.id).Str("advertise", o.Advertise).Dur("ttl", o.TTL).Msg("fleet: registered with Redis")
	return r, nil
}

// ID is this instance's id.
func (r *Registry) ID() string { return r.id }

// Healthy reports whether the last Redis round trip worked.
func (r *Registry) Healthy() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.healthy
}

func (r *Registry) key(parts ...string) string { return r.prefix + strings.Join(parts, ":") }

// beat renews this instance's heartbeat and publishes the local sessions
// again when Redis no longer has this instance's heartbeat key (it
// restarted empty, even between two heartbeats, or the key expired while
// this instance could not reach it and another instance swept its records)
// or when the last round trip failed (a session committed meanwhile was
// never published). It returns how many sessions it published again, and
// whether Redis had lost this instance's key.
//
// The key is the detector, not Redis's run_id: a restart and an expiry
// both lose it, and checking it costs one EXISTS in the heartbeat's
// transaction; republishing every session at every heartbeat would cost
// three writes per session per heartbeat and race Release.
func (r *Registry) beat(ctx context.Context) (republished int, lost bool, err error) {
	r.mu.Lock()
	wasHealthy := r.healthy
	load := make([]any, 0, 2*len(r.load))
	for k, v := range r.load {
		load = append(load, k, v)
	}
	r.mu.Unlock()
	pipe := r.rdb.TxPipeline()
	had := pipe.Exists(ctx, r.key("inst", r.id))
	pipe.Set(ctx, r.key("inst", r.id), r.opts.Advertise, r.opts.TTL)
	pipe.SAdd(ctx, r.key("instances"), r.id)
	pipe.Del(ctx, r.key("inst-load", r.id))
	if len(load) > 0 {
		pipe.HSet(ctx, r.key("inst-load", r.id), load...)
		pipe.Expire(ctx, r.key("inst-load", r.id), r.opts.TTL)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, false, err
	}
	lost = had.Val() == 0
	if !lost && wasHealthy {
		return 0, false, nil
	}
	n, err := r.republish(ctx)
	return n, lost, err
}

// republish writes every local session's record again. A session released
// while its record was being written is deleted again afterwards, so a
// close racing the heartbeat leaves no record behind.
func (r *Registry) republish(ctx context.Context) (int, error) {
	r.mu.Lock()
	local := make(map[string]string, len(r.local))
	for k, v := range r.local {
		local[k] = v
	}
	r.mu.Unlock()
	if len(local) == 0 {
		return 0, nil
	}
	pipe := r.rdb.TxPipeline()
	for sid, p := range local {
		r.publish(ctx, pipe, sid, p)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	r.mu.Lock()
	var gone []string
	for sid := range local {
		if _, ok := r.local[sid]; !ok {
			gone = append(gone, sid)
		}
	}
	r.mu.Unlock()
	for _, sid := range gone {
		r.unpublish(ctx, sid, local[sid])
	}
	return len(local) - len(gone), nil
}

func (r *Registry) run() {
	defer close(r.done)
	t := time.NewTicker(r.opts.TTL / 3)
	defer t.Stop()
	sweep := 0
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), r.opts.TTL/3)
		n, lost, err := r.beat(ctx)
		if err == nil {
			if sweep++; sweep%3 == 0 {
				r.sweepDead(ctx)
			}
		}
		cancel()
		r.mu.Lock()
		was := r.healthy
		r.healthy = err == nil
		r.mu.Unlock()
		switch {
		case err != nil && was:
			r.log.Warn().Err(err).Msg("fleet: Redis is unreachable; local sessions keep working, new sessions and forwarding wait for it")
		case err == nil && !was:
			r.log.Info().Int("sessions", n).Bool("recordsLost", lost).Msg("fleet: Redis is back; local sessions published again")
		case err == nil && lost:
			r.log.Warn().Int("sessions", n).Msg("fleet: Redis had lost this instance's records (it restarted, or this instance's heartbeat expired); local sessions published again")
		}
	}
}

// sweepDead removes what dead instances left: their sessions' records and
// quota entries.
func (r *Registry) sweepDead(ctx context.Context) {
	ids, err := r.rdb.SMembers(ctx, r.key("instances")).Result()
	if err != nil {
		return
	}
	for _, id := range ids {
		if id == r.id {
			continue
		}
		n, err := r.rdb.Exists(ctx, r.key("inst", id)).Result()
		if err != nil || n > 0 {
			continue
		}
		r.forget(ctx, id)
	}
}

// forget deletes a dead instance's records.
func (r *Registry) forget(ctx context.Context, id string) {
	sids, err := r.rdb.SMembers(ctx, r.key("inst-sess", id)).Result()
	if err != nil {
		return
	}
	for _, sid := range sids {
		r.drop(ctx, sid)
	}
	pipe := r.rdb.TxPipeline()
	pipe.Del(ctx, r.key("inst-sess", id))
	pipe.SRem(ctx, r.key("instances"), id)
	_, _ = pipe.Exec(ctx)
	r.log.Info().Str("instance", id).Int("sessions", len(sids)).Msg("fleet: removed the records of an instance whose heartbeat expired")
}

// drop deletes one session's record and its quota entry.
func (r *Registry) drop(ctx context.Context, sid string) {
	vals, err := r.rdb.HMGet(ctx, r.key("sess", sid), "owner", "principal").Result()
	if err != nil {
		return
	}
	pipe := r.rdb.TxPipeline()
	pipe.Del(ctx, r.key("sess", sid))
	if owner, ok := vals[0].(string); ok {
		pipe.SRem(ctx, r.key("inst-sess", owner), sid)
		if p, ok := vals[1].(string); ok {
			pipe.ZRem(ctx, r.key("principal", p), sid+"|"+owner)
		}
	}
	_, _ = pipe.Exec(ctx)
}

func (r *Registry) publish(ctx context.Context, pipe redis.Pipeliner, sid, principal string) {
	pipe.HSet(ctx, r.key("sess", sid), "owner", r.id, "url", r.opts.Advertise, "principal", principal,
		"created", strconv.FormatInt(time.Now().Unix(), 10))
	pipe.SAdd(ctx, r.key("inst-sess", r.id), sid)
	pipe.ZAdd(ctx, r.key("principal", principal), redis.Z{Score: float64(time.Now().Unix()), Member: sid + "|" + r.id})
}

// reserveScript counts a principal's live sessions fleet-wide (dropping
// members whose owner's heartbeat expired) and adds the new member when
// under the cap, atomically.
var reserveScript = redis.NewScript(`
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, m in ipairs(members) do
  local owner = string.match(m, '|([^|]*)$')
  if owner and redis.call('EXISTS', ARGV[1] .. 'inst:' .. owner) == 0 then
    redis.call('ZREM', KEYS[1], m)
  end
end
local max = tonumber(ARGV[3])
if max > 0 and redis.call('ZCARD', KEYS[1]) >= max then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2])
return 1
`)

// Reservation holds one slot of a principal's fleet-wide quota until the
// session it is for exists (Commit) or was not created (Cancel).
type Reservation struct {
	r         *Registry
	principal string
	member    string
}

// Reserve takes a quota slot for a new session of principal. It fails with
// ErrQuota when the principal is at its cap and ErrUnavailable when Redis
// cannot be reached.
func (r *Registry) Reserve(ctx context.Context, principal string) (*Reservation, error) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	member := "pending-" + hex.EncodeToString(b) + "|" + r.id
	ok, err := reserveScript.Run(ctx, r.rdb, []string{r.key("principal", principal)},
		r.prefix, member, r.opts.MaxPerPrincipal, time.Now().Unix()).Int()
	if err != nil {
		r.markDown(err)
		return nil, ErrUnavailable
	}
	if ok == 0 {
		return nil, fmt.Errorf("%w: this token already has %d sessions across the fleet (--http-session-max-per-principal); close one (DELETE) or wait for idle expiry", ErrQuota, r.opts.MaxPerPrincipal)
	}
	return &Reservation{r: r, principal: principal, member: member}, nil
}

// Commit records the session the reservation was for as owned by this
// instance.
func (res *Reservation) Commit(ctx context.Context, sid string) error {
	r := res.r
	r.mu.Lock()
	r.local[sid] = res.principal
	r.mu.Unlock()
	pipe := r.rdb.TxPipeline()
	pipe.ZRem(ctx, r.key("principal", res.principal), res.member)
	r.publish(ctx, pipe, sid, res.principal)
	if _, err := pipe.Exec(ctx); err != nil {
		// The session works locally; the next heartbeat after Redis
		// returns publishes it.
		r.markDown(err)
		return ErrUnavailable
	}
	return nil
}

// Cancel gives the slot back.
func (res *Reservation) Cancel(ctx context.Context) {
	_ = res.r.rdb.ZRem(ctx, res.r.key("principal", res.principal), res.member).Err()
}

// Release forgets a session this instance owned (closed or expired).
func (r *Registry) Release(ctx context.Context, sid string) {
	r.mu.Lock()
	p, ok := r.local[sid]
	delete(r.local, sid)
	r.mu.Unlock()
	if ok {
		r.unpublish(ctx, sid, p)
	}
}

// unpublish deletes this instance's record of sid and its quota entry.
func (r *Registry) unpublish(ctx context.Context, sid, principal string) {
	pipe := r.rdb.TxPipeline()
	pipe.Del(ctx, r.key("sess", sid))
	pipe.SRem(ctx, r.key("inst-sess", r.id), sid)
	pipe.ZRem(ctx, r.key("principal", principal), sid+"|"+r.id)
	_, _ = pipe.Exec(ctx)
}

// Lookup finds the live owner of sid. A session whose owner's heartbeat
// expired is removed and reported as ErrNotFound.
func (r *Registry) Lookup(ctx context.Context, sid string) (Record, error) {
	vals, err := r.rdb.HGetAll(ctx, r.key("sess", sid)).Result()
	if err != nil {
		r.markDown(err)
		return Record{}, ErrUnavailable
	}
	if len(vals) == 0 {
		return Record{}, ErrNotFound
	}
	rec := Record{ID: sid, Owner: vals["owner"], URL: vals["url"], Principal: vals["principal"]}
	if sec, err := strconv.ParseInt(vals["created"], 10, 64); err == nil {
		rec.Created = time.Unix(sec, 0)
	}
	if rec.Owner == r.id {
		return rec, nil
	}
	n, err := r.rdb.Exists(ctx, r.key("inst", rec.Owner)).Result()
	if err != nil {
		r.markDown(err)
		return Record{}, ErrUnavailable
	}
	if n == 0 {
		r.drop(ctx, sid)
		return Record{}, ErrNotFound
	}
	return rec, nil
}

func (r *Registry) markDown(err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	r.mu.Lock()
	r.healthy = false
	r.mu.Unlock()
}

// Close deregisters this instance at once (a graceful shutdown): its
// sessions' records, its heartbeat and its quota entries are deleted, so
// other instances answer 404 for them without waiting for the TTL.
func (r *Registry) Close(ctx context.Context) error {
	select {
	case <-r.stop:
		return nil
	default:
		close(r.stop)
	}
	<-r.done
	r.mu.Lock()
	local := r.local
	r.local = map[string]string{}
	r.mu.Unlock()
	pipe := r.rdb.TxPipeline()
	for sid, p := range local {
		pipe.Del(ctx, r.key("sess", sid))
		pipe.ZRem(ctx, r.key("principal", p), sid+"|"+r.id)
	}
	pipe.Del(ctx, r.key("inst-sess", r.id), r.key("inst", r.id))
	pipe.SRem(ctx, r.key("instances"), r.id)
	_, err := pipe.Exec(ctx)
	return errors.Join(err, r.rdb.Close())
}

// AddLoad records that a local session attached to (delta 1) or left
// (delta -1) a browser pool endpoint; the next heartbeat publishes it.
func (r *Registry) AddLoad(endpoint string, delta int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.load[endpoint] += delta
	if r.load[endpoint] <= 0 {
		delete(r.load, endpoint)
	}
}

// Load sums, over live instances, the sessions attached to each browser
// pool endpoint (this instance's counts are current; others' are as of
// their last heartbeat).
func (r *Registry) Load(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	r.mu.Lock()
	for k, v := range r.load {
		out[k] += v
	}
	r.mu.Unlock()
	ids, err := r.rdb.SMembers(ctx, r.key("instances")).Result()
	if err != nil {
		r.markDown(err)
		return out, ErrUnavailable
	}
	for _, id := range ids {
		if id == r.id {
			continue
		}
		m, err := r.rdb.HGetAll(ctx, r.key("inst-load", id)).Result()
		if err != nil {
			continue
		}
		for k, v := range m {
			n, _ := strconv.Atoi(v)
			out[k] += n
		}
	}
	return out, nil
}
