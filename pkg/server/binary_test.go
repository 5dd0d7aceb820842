package server

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
)

func TestBinaryResolverResolvesOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var runs atomic.Int32
		b := newBinaryResolver(func(ctx context.Context) (cloakbrowser.BinaryInfo, error) {
			runs.Add(1)
			time.Sleep(time.Second)
			return cloakbrowser.BinaryInfo{BinaryPath: "/bin/chromium"}, nil
		})
		defer b.close()
		b.start()
		for range 3 {
			info, err := b.get(context.Background())
			if err != nil || info.BinaryPath != "/bin/chromium" {
				t.Fatalf("get = %+v, %v", info, err)
			}
		}
		if n := runs.Load(); n != 1 {
			t.Fatalf("resolve ran %d times, want 1", n)
		}
	})
}

func TestBinaryResolverKeepsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var runs atomic.Int32
		boom := errors.New("boom")
		b := newBinaryResolver(func(ctx context.Context) (cloakbrowser.BinaryInfo, error) {
			runs.Add(1)
			return cloakbrowser.BinaryInfo{}, boom
		})
		defer b.close()
		b.start()
		for range 2 {
			if _, err := b.get(context.Background()); !errors.Is(err, boom) {
				t.Fatalf("get: %v, want boom", err)
			}
		}
		if n := runs.Load(); n != 1 {
			t.Fatalf("resolve ran %d times, want 1 (the error is kept)", n)
		}
	})
}

func TestBinaryResolverCallerContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		b := newBinaryResolver(func(ctx context.Context) (cloakbrowser.BinaryInfo, error) {
			<-release
			return cloakbrowser.BinaryInfo{BinaryPath: "/bin/chromium"}, nil
		})
		defer b.close()
		b.start()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := b.get(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("get with a short context: %v, want DeadlineExceeded", err)
		}
		close(release)
		if info, err := b.get(context.Background()); err != nil || info.BinaryPath != "/bin/chromium" {
			t.Fatalf("get after the resolution: %+v, %v", info, err)
		}
	})
}

// TestBinaryResolverCloseStopsTheWork checks that close cancels a resolution
// in flight (a download, say) and returns only once its goroutine is gone.
func TestBinaryResolverCloseStopsTheWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ended atomic.Bool
		b := newBinaryResolver(func(ctx context.Context) (cloakbrowser.BinaryInfo, error) {
			defer ended.Store(true)
			<-ctx.Done() // a download that only the context stops
			return cloakbrowser.BinaryInfo{}, ctx.Err()
		})
		b.start()
		synctest.Wait()
		start := time.Now()
		b.close()
		if !ended.Load() {
			t.Fatal("close returned while the resolution still ran")
		}
		if d := time.Since(start); d != 0 {
			t.Fatalf("close took %v of fake time, want at once", d)
		}
		if _, err := b.get(context.Background()); !errors.Is(err, context.Canceled) {
			t.Fatalf("get after close: %v, want Canceled", err)
		}
	})
}

func TestBinaryResolverAfterCloseDoesNotResolve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var runs atomic.Int32
		b := newBinaryResolver(func(ctx context.Context) (cloakbrowser.BinaryInfo, error) {
			runs.Add(1)
			return cloakbrowser.BinaryInfo{}, nil
		})
		b.close()
		if _, err := b.get(context.Background()); !errors.Is(err, context.Canceled) {
			t.Fatalf("get after close: %v, want Canceled", err)
		}
		b.close()
		if n := runs.Load(); n != 0 {
			t.Fatalf("resolve ran %d times after close", n)
		}
	})
}

func TestKnownBinary(t *testing.T) {
	b := knownBinary(cloakbrowser.BinaryInfo{BinaryPath: "/bin/chromium"})
	defer b.close()
	if info, err := b.get(context.Background()); err != nil || info.BinaryPath != "/bin/chromium" {
		t.Fatalf("get = %+v, %v", info, err)
	}
}
