package server

import (
	"context"
	"sync"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/flight"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
)

// binaryResolveTimeout bounds one resolution of the browser binary, a
// download included.
const binaryResolveTimeout = 15 * time.Minute

// binaryResolver resolves the browser binary once, in the background, and
// keeps the result (an error included) for every later caller. The work runs
// on a goroutine owned by its flight; close cancels it and waits for it.
type binaryResolver struct {
	ctx     context.Context // ends at close
	cancel  context.CancelFunc
	resolve func(context.Context) (cloakbrowser.BinaryInfo, error)
	f       flight.Flight[cloakbrowser.BinaryInfo]

	mu  sync.Mutex
	res *binaryResult // nil until known
}

type binaryResult struct {
	info cloakbrowser.BinaryInfo
	err  error
}

// newBinaryResolver returns a resolver that will call resolve once; start
// begins it.
func newBinaryResolver(resolve func(context.Context) (cloakbrowser.BinaryInfo, error)) *binaryResolver {
	ctx, cancel := context.WithCancel(context.Background())
	return &binaryResolver{ctx: ctx, cancel: cancel, resolve: resolve}
}

// knownBinary is a resolver whose result is info (doctor's launch check,
// which resolved it already).
func knownBinary(info cloakbrowser.BinaryInfo) *binaryResolver {
	b := newBinaryResolver(nil)
	b.res = &binaryResult{info: info}
	return b
}

// start begins the resolution in the background and returns at once.
func (b *binaryResolver) start() {
	b.f.Start(b.work)
}

// get waits for the resolution, or for ctx.
func (b *binaryResolver) get(ctx context.Context) (cloakbrowser.BinaryInfo, error) {
	if r := b.result(); r != nil {
		return r.info, r.err
	}
	return b.f.Do(ctx, b.work)
}

func (b *binaryResolver) result() *binaryResult {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.res
}

// work runs resolve unless a result is known. After close it returns the
// cancellation without resolving.
func (b *binaryResolver) work() (cloakbrowser.BinaryInfo, error) {
	if r := b.result(); r != nil {
		return r.info, r.err
	}
	ctx, cancel := context.WithTimeout(b.ctx, binaryResolveTimeout)
	defer cancel()
	var info cloakbrowser.BinaryInfo
	err := ctx.Err()
	if err == nil {
		info, err = b.resolve(ctx)
	}
	b.mu.Lock()
	b.res = &binaryResult{info: info, err: err}
	b.mu.Unlock()
	return info, err
}

// close stops a resolution in flight and waits until its goroutine is gone.
func (b *binaryResolver) close() {
	b.cancel()
	_ = b.f.Wait(context.Background())
}
