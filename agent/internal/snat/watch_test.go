package snat

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeSource is a conntrack table in memory whose event stream the test drives: what the kernel cannot be made
// to do on cue (fail a socket) and what it does (lose events) in one deterministic script.
type fakeSource struct {
	mu      sync.Mutex
	flows   map[uint32]Flow
	streams chan *fakeStream
	dumps   chan string
}

type fakeStream struct{ items chan any } // Flow (NEW), destroyed (DESTROY), or an error

type destroyed struct{ Flow }

func newFakeSource(flows ...Flow) *fakeSource {
	s := &fakeSource{flows: map[uint32]Flow{}, streams: make(chan *fakeStream, 4), dumps: make(chan string, 16)}
	for _, f := range flows {
		s.flows[f.ID] = f
	}
	return s
}

func (s *fakeSource) Subscribe() (EventStream, error) {
	st := &fakeStream{items: make(chan any, 16)}
	s.streams <- st
	return st, nil
}

func (s *fakeSource) Dump(_ context.Context, fn func(Flow)) error {
	s.mu.Lock()
	var flows []Flow
	for _, f := range s.flows {
		flows = append(flows, f)
	}
	s.mu.Unlock()
	for _, f := range flows {
		fn(f)
	}
	s.dumps <- "dumped"
	return nil
}

// change alters the table without an event (as if the event were lost).
func (s *fakeSource) change(add []Flow, remove ...uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range add {
		s.flows[f.ID] = f
	}
	for _, id := range remove {
		delete(s.flows, id)
	}
}

func (st *fakeStream) Next(ctx context.Context, fn func(Flow, bool)) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case it := <-st.items:
		switch v := it.(type) {
		case Flow:
			fn(v, false)
		case destroyed:
			fn(v.Flow, true)
		case error:
			return v
		}
		return nil
	}
}

func (st *fakeStream) Close() error { return nil }

func TestWatcherRedumpsAfterLostEventsAndRestartsAfterAFailure(t *testing.T) {
	f1, f2 := flow(1, 1001, "52.1.2.3:443", ProtoTCP), flow(2, 1002, "52.1.2.3:443", ProtoTCP)
	src := newFakeSource(f1, f2)
	table := NewTable(Config{Classifier: NewClassifier(nil, false), TCPHold: time.Hour, UDPHold: time.Hour, Top: 5,
		PeakWindow: time.Hour, MaxTracked: 100}, time.Now())
	var mu sync.Mutex
	reasons := map[string]int{}
	w := &Watcher{Table: table, Source: src, Resynced: func(r string) { mu.Lock(); reasons[r]++; mu.Unlock() }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	defer func() { cancel(); <-done }()

	st := <-src.streams
	<-src.dumps
	f3 := flow(3, 1003, "52.1.2.3:443", ProtoTCP)
	src.change([]Flow{f3})
	st.items <- f3
	// Events are lost: f1 ends and f4 starts unseen, then the overflow is reported.
	f4 := flow(4, 1004, "52.1.2.3:443", ProtoTCP)
	src.change([]Flow{f4}, 1)
	st.items <- ErrOverflow
	<-src.dumps
	// The dump has been read; its end (which closes f1) follows at once.
	deadline := time.Now().Add(time.Minute)
	for {
		s := table.Tick(time.Now())
		if len(s.Top) == 1 && s.Top[0].Open == 3 && s.Top[0].InUse == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the re-dump: %+v (f2, f3, f4 open; f1 held)", s.Top)
		}
		time.Sleep(time.Millisecond)
	}

	st.items <- errors.New("socket gone") // the session ends; a new one subscribes and dumps again
	<-src.streams
	<-src.dumps
	mu.Lock()
	defer mu.Unlock()
	if reasons[ReasonStart] != 1 || reasons[ReasonOverflow] != 1 || reasons[ReasonError] != 1 {
		t.Fatalf("resyncs %v", reasons)
	}
}
