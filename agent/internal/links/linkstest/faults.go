package linkstest

import (
	"fmt"
	"sync/atomic"
	"syscall"

	"github.com/vishvananda/netlink"

	"github.com/wirespeed-io/wirespeed/agent/internal/links"
)

// Failure is how BreakFirstSubscription breaks a subscription.
type Failure struct {
	Err   error // reported through the subscription's error callback, unless nil
	Close bool  // then the update channel is closed
}

// ReceiveFailed is what vishvananda/netlink (v1.3.1, linkSubscribeAt) does when a receive on the
// subscription socket fails, e.g. with ENOBUFS after an overflow: it reports the errno formatted into
// text and closes the update channel.
func ReceiveFailed(errno syscall.Errno) Failure {
	return Failure{Err: fmt.Errorf("Receive failed: %v", errno), Close: true}
}

// DumpInterrupted is what the library reports when the dump opening a subscription was interrupted by
// a change (NLM_F_DUMP_INTR): an error value, with the subscription left open.
var DumpInterrupted = Failure{Err: netlink.ErrDumpInterrupted}

// BreakFirstSubscription returns nl whose first subscription is a real one that breaks as f says once
// inject is closed; later subscriptions are nl's own. subs counts subscriptions.
func BreakFirstSubscription(nl links.Netlink, inject <-chan struct{}, f Failure, subs *atomic.Int32) links.Netlink {
	broken := nl
	broken.LinkSubscribe = func(ch chan<- netlink.LinkUpdate, done <-chan struct{}, opts netlink.LinkSubscribeOptions) error {
		if subs.Add(1) > 1 {
			return nl.LinkSubscribe(ch, done, opts)
		}
		// The real subscription feeds mid; updates are passed on until the failure.
		mid := make(chan netlink.LinkUpdate)
		if err := nl.LinkSubscribe(mid, done, opts); err != nil {
			return err
		}
		go forwardUntil(mid, ch, done, inject, f, opts.ErrorCallback)
		return nil
	}
	return broken
}

// forwardUntil passes updates from mid to ch until inject, then fails as f says. ch is closed whenever
// forwarding ends, as the library closes its channel when a subscription ends.
func forwardUntil(mid <-chan netlink.LinkUpdate, ch chan<- netlink.LinkUpdate, done, inject <-chan struct{},
	f Failure, callback func(error)) {
	defer func() {
		close(ch)
		for range mid { // the real subscription closes mid once done is closed
		}
	}()
	for {
		select {
		case u, ok := <-mid:
			if !ok {
				return
			}
			select {
			case ch <- u:
			case <-done:
				return
			}
		case <-inject:
			if f.Err != nil {
				callback(f.Err)
			}
			if f.Close {
				return
			}
			inject = nil // still subscribed: keep passing updates on
		case <-done:
			return
		}
	}
}
