package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/pflag"

	"github.com/parselbox/parselbox/host/config"
	"github.com/parselbox/parselbox/host/mcpserver"
)

// options are the mcpserver options of a loaded configuration.
func options(file *config.File, log hclog.Logger) mcpserver.Options {
	s := file.Server
	return mcpserver.Options{Config: *file.Config, Settings: &s, Logger: log, Version: version}
}

// runServe is the root command: the MCP server.
func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if os.Getenv(mcpserver.ProbeEnv) != "" {
		// Started by a Parselbox's mcpproxy bridge from an MCP configuration
		// that lists this Parselbox too: do not serve ourselves to
		// ourselves.
		return exitOK
	}
	fs := pflag.NewFlagSet("parselbox", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		usage(stderr)
		fmt.Fprint(stderr, "\nFlags of the MCP server (parselbox [flags]):\n")
		fs.PrintDefaults()
	}
	flags := newServeFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintln(stderr, "parselbox:", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "parselbox: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return exitUsage
	}
	file, err := flags.load() // flag > $PARSELBOX_AUTH_TOKEN > file > default
	if err != nil {
		fmt.Fprintln(stderr, "parselbox:", err)
		return exitUsage
	}
	s := file.Server
	log := newLogger(stderr, flags.verbose)
	if !flags.verbose && os.Getenv("PARSELBOX_LOG_LEVEL") == "" {
		log.SetLevel(hclog.Info) // say where MCP is served
	}
	file.Config.Logger = log
	file.Config.Notify = notifier(stderr)
	srv, err := mcpserver.New(options(file, log))
	if err != nil {
		fmt.Fprintln(stderr, "parselbox:", file.Locate(err))
		return exitUsage
	}
	defer srv.Close()

	switch s.Transport {
	case "http":
		ln, lerr := net.Listen("tcp", net.JoinHostPort(s.Host, strconv.Itoa(s.Port)))
		if lerr != nil {
			fmt.Fprintln(stderr, "parselbox:", lerr)
			return exitInternal
		}
		err = serveHTTP(ctx, srv, ln, s.DrainTimeout, log)
	default:
		log.Info("MCP available via stdio")
		stdioProcs()
		log.Debug("stdio server", "gomaxprocs", runtime.GOMAXPROCS(0))
		t, restore := mcpserver.Stdio(stdin, stdout)
		err = srv.Run(ctx, t)
		restore()
	}
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		return exitOK
	case errors.Is(err, mcpserver.ErrNeedToken), isConfigError(err):
		fmt.Fprintln(stderr, "parselbox:", file.Locate(err))
		return exitUsage
	default:
		fmt.Fprintln(stderr, "parselbox:", err)
		return exitInternal
	}
}

// serveHTTP serves until ctx is done, or until a drain that ctx's signal
// asks for is over: no new sessions, the open ones go on until they close
// or drainTimeout passes, then the rest are closed.
func serveHTTP(ctx context.Context, srv *mcpserver.Server, ln net.Listener, drainTimeout time.Duration, log hclog.Logger) error {
	drain := drainRequested(ctx)
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-drain:
		case <-serveCtx.Done():
			return
		}
		log.Info("signal received: draining", "timeout", drainTimeout)
		dctx, cancel := context.WithTimeout(serveCtx, drainTimeout)
		err := srv.Drain(dctx)
		cancel()
		switch {
		case err == nil:
			log.Info("drained: every session closed")
		case serveCtx.Err() == nil:
			log.Info("drain timeout: closing the open sessions", "sessions", srv.SessionCount())
		}
		stop()
	}()
	err := srv.RunHTTP(serveCtx, ln)
	if errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return nil // drained
	}
	return err
}

// stdioProcs runs the Go code of a stdio server on one thread at a time
// (GOMAXPROCS=1) unless $GOMAXPROCS says otherwise. A stdio server serves
// one client whose requests come one after another, each passed between
// a handful of goroutines (the go-sdk's reader, its dispatcher, the
// handler, the sandbox's reader): with one P each hand-off stays on the
// running thread, where with more every one may wake another thread to
// take it (a futex wake-up and a context switch, and spinning threads
// that take CPU from the sandbox working beside them). Measured on
// execute_code("1+1") + ping, A/B in one run, 400 each, load 6-13 on
// 2 cores: the server's CPU per round 1.69 -> 1.19 ms, its context
// switches 29 -> 15. The sandbox, the bridges and the HTTP transport are
// not affected (other processes; HTTP serves many sessions at once).
func stdioProcs() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
