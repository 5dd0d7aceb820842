package smoke

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// fileServer serves a directory on loopback for a scenario's ${BASE}.
type fileServer struct {
	URL  string
	srv  *http.Server
	root *os.Root
	done chan struct{}
}

// serveDir starts serving dir (confined with os.Root) on 127.0.0.1 at a
// free port.
func serveDir(dir string) (*fileServer, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("serve %s: %w", dir, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("serve %s: %w", dir, err)
	}
	fs := &fileServer{
		URL:  "http://" + ln.Addr().String(),
		srv:  &http.Server{Handler: http.FileServerFS(root.FS()), ReadHeaderTimeout: 10 * time.Second},
		root: root,
		done: make(chan struct{}),
	}
	go func() {
		defer close(fs.done)
		if err := fs.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener is ours; Serve ends only by Close
		}
	}()
	return fs, nil
}

// Close stops the server and waits for it.
func (f *fileServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := f.srv.Shutdown(ctx)
	if err != nil {
		err = f.srv.Close()
	}
	<-f.done
	return errors.Join(err, f.root.Close())
}
