package ethioctl

import (
	"testing"

	"github.com/safchain/ethtool"
)

// The wire order of struct ethtool_ringparam: each field lands in its own u32, in the header's order.
func TestRingEncodingFollowsTheKernelStruct(t *testing.T) {
	ring := ethtool.Ring{Cmd: 1, RxMaxPending: 2, RxMiniMaxPending: 3, RxJumboMaxPending: 4, TxMaxPending: 5,
		RxPending: 6, RxMiniPending: 7, RxJumboPending: 8, TxPending: 9}
	buf := make([]byte, ringParamSize)
	encodeRing(buf, ring)
	for i := range 9 {
		if got := buf[4*i]; int(got) != i+1 {
			t.Fatalf("u32 #%d holds %d, want %d", i, got, i+1)
		}
	}
	if decodeRing(buf) != ring {
		t.Fatalf("round trip: %+v, want %+v", decodeRing(buf), ring)
	}
}
