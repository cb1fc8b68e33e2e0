package ctnetlink

import (
	"context"
	"errors"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/wirespeed-io/wirespeed/agent/internal/snat"
)

// The event reader's batching, without a kernel conntrack table: recorded ctnetlink event datagrams
// (testdata/events.bin) go through a Unix datagram socket pair, which keeps datagram boundaries and reports
// a cut datagram's full length under MSG_TRUNC as netlink does.

func eventPair(t *testing.T) (send int, e *Events) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Close(fds[0]) })
	tv := unix.NsecToTimeval(receiveTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fds[1], unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	// Room for every recorded datagram at once (the default buffer holds a few hundred).
	_ = unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_SNDBUF, 4<<20)
	_ = unix.SetsockoptInt(fds[1], unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
	e = newEvents(fds[1], fixtureTimeouts)
	t.Cleanup(func() { _ = e.Close() })
	return fds[0], e
}

func sendAll(t *testing.T, fd int, dgs [][]byte) {
	t.Helper()
	for _, b := range dgs {
		if err := unix.Send(fd, b, 0); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMmsghdrMatchesTheKernelLayout(t *testing.T) {
	// struct mmsghdr { struct user_msghdr msg_hdr; unsigned int msg_len; }, padded to the msghdr's alignment.
	want := (unsafe.Sizeof(unix.Msghdr{}) + 4 + unsafe.Alignof(unix.Msghdr{}) - 1) &^ (unsafe.Alignof(unix.Msghdr{}) - 1)
	if got := unsafe.Sizeof(mmsghdr{}); got != want || unsafe.Offsetof(mmsghdr{}.n) != unsafe.Sizeof(unix.Msghdr{}) {
		t.Fatalf("mmsghdr is %d bytes with msg_len at %d, want %d with msg_len at %d", got,
			unsafe.Offsetof(mmsghdr{}.n), want, unsafe.Sizeof(unix.Msghdr{}))
	}
}

// One Next hands on every queued event, across several recvmmsg batches, in order, decoded as the
// reference decoder does.
func TestNextReadsEveryQueuedDatagramInBatches(t *testing.T) {
	dgs := datagrams(t, "events.bin")
	if len(dgs) <= 2*eventBatch {
		t.Fatalf("need more than %d recorded datagrams for several batches, have %d", 2*eventBatch, len(dgs))
	}
	var want []snat.Flow
	for _, b := range dgs {
		flows, _ := reference(t, b, true)
		want = append(want, flows...)
	}
	send, e := eventPair(t)
	sendAll(t, send, dgs)
	var got []snat.Flow
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Next(ctx, func(f snat.Flow, _ bool) { got = append(got, f) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("one Next handed on %d events, want all %d queued", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A datagram too large for its slot lost its events: Next hands on the others of the batch and reports an
// overflow, so the Watcher dumps the table again; the subscription stays usable.
func TestACutDatagramIsReportedAsLostEvents(t *testing.T) {
	dgs := datagrams(t, "events.bin")
	send, e := eventPair(t)
	big := make([]byte, eventBytes+1)
	copy(big, dgs[1])
	sendAll(t, send, [][]byte{dgs[0], big, dgs[2]})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := 0
	err := e.Next(ctx, func(snat.Flow, bool) { n++ })
	if !errors.Is(err, snat.ErrOverflow) || n != 2 {
		t.Fatalf("Next with a cut datagram: %d events handed on, err %v; want 2 and ErrOverflow", n, err)
	}
	sendAll(t, send, dgs[3:4])
	n = 0
	if err := e.Next(ctx, func(snat.Flow, bool) { n++ }); err != nil || n != 1 {
		t.Fatalf("Next after the overflow: %d events, err %v; want 1, nil", n, err)
	}
}
