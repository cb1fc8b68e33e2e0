//go:build pprof

package main

// Profiling builds only (go build -tags pprof; bench/agent/snat --pprof): the shipped build has no pprof
// endpoint, so nothing here reaches a node. WIRESPEED_AGENT_PPROF=ADDR serves net/http/pprof there.

import (
	"log/slog"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof/ on http.DefaultServeMux
	"os"
	"time"
)

func init() {
	addr := os.Getenv("WIRESPEED_AGENT_PPROF")
	if addr == "" {
		return
	}
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); err != nil {
			slog.Error("pprof endpoint", "addr", addr, "err", err)
		}
	}()
}
