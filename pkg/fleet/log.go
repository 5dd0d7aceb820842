package fleet

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// redisLog routes go-redis's own log lines (connection pool trouble, which
// it otherwise prints as plain text to stderr) into the server's JSON log.
// They are debug lines: the registry itself says when Redis goes and comes
// back (one warning, one info line), while go-redis repeats its dial
// failure at every heartbeat of an outage. Only its recovered panics are
// errors.
type redisLog struct{ l zerolog.Logger }

func (r redisLog) Printf(_ context.Context, format string, v ...any) {
	msg := strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: ")
	level := zerolog.DebugLevel
	if strings.Contains(msg, "panic") {
		level = zerolog.ErrorLevel
	}
	r.l.WithLevel(level).Str("component", "redis").Msg(msg)
}

// setRedisLogger makes go-redis log through l. go-redis has one logger per
// process (redis.SetLogger); the last registry opened owns it, which in a
// server process is its only one.
func setRedisLogger(l zerolog.Logger) { redis.SetLogger(redisLog{l: l}) }
