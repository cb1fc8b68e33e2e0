package links

import (
	"fmt"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// maxMTU reads a link's IFLA_MAX_MTU (the device's own limit, `ip -d link` maxmtu), which the netlink
// library does not decode. 0 means the kernel did not say.
func maxMTU(ns *netns.NsHandle) func(index int) (int, error) {
	return func(index int) (int, error) {
		target := netns.None()
		if ns != nil {
			target = *ns
		}
		s, err := nl.GetNetlinkSocketAt(target, netns.None(), unix.NETLINK_ROUTE)
		if err != nil {
			return 0, fmt.Errorf("netlink socket: %w", err)
		}
		defer s.Close()
		req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_ACK)
		msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
		msg.Index = int32(index)
		req.AddData(msg)
		if err := s.Send(req); err != nil {
			return 0, fmt.Errorf("RTM_GETLINK %d: %w", index, err)
		}
		for {
			msgs, _, err := s.Receive()
			if err != nil {
				return 0, fmt.Errorf("RTM_GETLINK %d: %w", index, err)
			}
			for _, m := range msgs {
				switch m.Header.Type {
				case unix.NLMSG_ERROR:
					if len(m.Data) >= 4 {
						if errno := int32(nl.NativeEndian().Uint32(m.Data[:4])); errno != 0 {
							return 0, fmt.Errorf("RTM_GETLINK %d: %w", index, unix.Errno(-errno))
						}
					}
					return 0, nil // the ACK after the reply: no IFLA_MAX_MTU was in it
				case unix.RTM_NEWLINK:
					if len(m.Data) < unix.SizeofIfInfomsg {
						continue
					}
					attrs, err := nl.ParseRouteAttr(m.Data[unix.SizeofIfInfomsg:])
					if err != nil {
						return 0, fmt.Errorf("RTM_GETLINK %d: %w", index, err)
					}
					for _, a := range attrs {
						if a.Attr.Type == unix.IFLA_MAX_MTU && len(a.Value) >= 4 {
							return int(nl.NativeEndian().Uint32(a.Value[:4])), nil
						}
					}
				}
			}
		}
	}
}
