// Command flood sends 18-byte UDP datagrams (64-byte frames) to one address as fast as it can for a while,
// then prints how many the kernel accepted. The QEMU diagnose case uses it to flood one NIC into another;
// bench/microburst-lab's burstgen refuses any path but a veth, so it cannot.
package main

import (
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: flood IP:PORT DURATION")
		os.Exit(2)
	}
	d, err := time.ParseDuration(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	c, err := net.Dial("udp4", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	payload := make([]byte, 18)
	sent := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		for range 256 {
			if _, err := c.Write(payload); err == nil {
				sent++
			}
		}
	}
	fmt.Println(sent)
}
