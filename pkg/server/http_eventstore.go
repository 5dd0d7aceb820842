package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// boundedEventStore is the Streamable HTTP transport's event store: it keeps
// the last few events of each session (at most eventStoreEvents, and at
// most eventStoreBytes of them), so a client that lost its stream can
// resume from a recent event while a session that sends screenshots for
// hours holds a few kilobytes, not all of them. mcp-go v1.2.1 also needs an
// event store to deliver the notifications a tool sends just before it
// answers (without one about half are lost: mark3labs/mcp-go#969).
type boundedEventStore struct {
	mu       sync.Mutex
	seq      int64
	sessions map[string]*eventRing
}

const (
	eventStoreEvents = 64
	eventStoreBytes  = 1 << 20
)

type storedEv struct {
	id, stream string
	msg        json.RawMessage
}

type eventRing struct {
	evs   []storedEv
	bytes int
}

func newBoundedEventStore() *boundedEventStore {
	return &boundedEventStore{sessions: map[string]*eventRing{}}
}

var _ server.EventStore = (*boundedEventStore)(nil)

// StoreEvent implements server.EventStore.
func (s *boundedEventStore) StoreEvent(_ context.Context, sessionID, streamID string, message json.RawMessage) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	id := strconv.FormatInt(s.seq, 10)
	r := s.sessions[sessionID]
	if r == nil {
		r = &eventRing{}
		s.sessions[sessionID] = r
	}
	if len(message) > eventStoreBytes {
		// Too big to keep (a full-page screenshot): delivered, not
		// resumable; what came before it cannot be resumed past it either.
		r.evs, r.bytes = nil, 0
		return id, nil
	}
	r.evs = append(r.evs, storedEv{id: id, stream: streamID, msg: append(json.RawMessage(nil), message...)})
	r.bytes += len(message)
	for len(r.evs) > eventStoreEvents || r.bytes > eventStoreBytes {
		r.bytes -= len(r.evs[0].msg)
		r.evs[0] = storedEv{}
		r.evs = r.evs[1:]
	}
	return id, nil
}

// ReplayEventsAfter implements server.EventStore.
func (s *boundedEventStore) ReplayEventsAfter(_ context.Context, sessionID, lastEventID string, send func(eventID string, message json.RawMessage) error) (string, error) {
	s.mu.Lock()
	r := s.sessions[sessionID]
	var stream string
	var tail []storedEv
	found := false
	if r != nil {
		for i, ev := range r.evs {
			if ev.id == lastEventID {
				stream, found = ev.stream, true
				for _, e := range r.evs[i+1:] {
					if e.stream == stream {
						tail = append(tail, e)
					}
				}
				break
			}
		}
	}
	s.mu.Unlock()
	if !found {
		return "", fmt.Errorf("%w: %s (only the last %d events of a session are kept)", server.ErrUnknownEventID, lastEventID, eventStoreEvents)
	}
	for _, ev := range tail {
		if err := send(ev.id, ev.msg); err != nil {
			return "", err
		}
	}
	return stream, nil
}

// PurgeSession implements server.EventStore.
func (s *boundedEventStore) PurgeSession(_ context.Context, sessionID string) error {
	s.mu.Lock()
	delete(s.sessions, sessionID)
	s.mu.Unlock()
	return nil
}
