package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
)

// Handler carries out requests; hinit's supervisor implements it. The
// server calls Handle only for a caller that is Root or Member and a
// request that passed Validate; the Handler applies Caller.May per service
// and answers with a Response whose Code is hsvc's exit code. ctx ends when
// the server stops or the client hangs up: long verbs return then.
type Handler interface {
	Handle(ctx context.Context, c Caller, req *Request) *Response
}

// HandlerFunc lets a plain function be a Handler.
type HandlerFunc func(ctx context.Context, c Caller, req *Request) *Response

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, c Caller, req *Request) *Response {
	return f(ctx, c, req)
}

// Server serves the control protocol. The zero values of the limits mean
// the protocol's defaults; tests shorten them.
type Server struct {
	Handler     Handler
	ControlGID  int // group whose members may use hsvc; < 0: none (only root and hinit's uid)
	Log         *slog.Logger
	ReadTimeout time.Duration // time to send the request (ReadTimeout)
	MaxInFlight int           // requests at once (MaxInFlight)

	group   string // ControlGID's name, for the permission message
	selfUID int
}

// Serve serves the control protocol on ln until ctx ends; see Server.
func Serve(ctx context.Context, ln *Listener, h Handler, controlGID int, log *slog.Logger) error {
	s := &Server{Handler: h, ControlGID: controlGID, Log: log}
	return s.Serve(ctx, ln)
}

// Serve accepts connections on ln, one goroutine each, until ctx ends; then
// it closes ln, waits for the requests in flight (their contexts are
// cancelled) and returns nil. It returns an error only when ln fails for
// good.
func (s *Server) Serve(ctx context.Context, ln *Listener) error {
	s.setDefaults()
	var wg sync.WaitGroup
	defer wg.Wait() // runs last: after cancel has ended the requests in flight
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	slots := make(chan struct{}, s.MaxInFlight)
	var delay time.Duration
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if delay, err = s.acceptFailed(ctx, err, delay); err != nil {
				return err
			}
			continue
		}
		delay = 0
		select {
		case slots <- struct{}{}:
			wg.Go(func() {
				defer func() { <-slots }()
				s.serveConn(ctx, conn)
			})
		default:
			s.refuseBusy(conn)
		}
	}
}

// acceptFailed handles an Accept error: fatal when the listener is closed,
// otherwise (out of file descriptors, ...) logged and retried after a
// growing delay, as net/http does, so that a full fd table does not spin.
func (s *Server) acceptFailed(ctx context.Context, err error, delay time.Duration) (time.Duration, error) {
	if errors.Is(err, os.ErrClosed) {
		return 0, fmt.Errorf("accept: %w", err)
	}
	delay = min(max(2*delay, 5*time.Millisecond), time.Second)
	s.Log.Warn("control: accept failed, retrying", "err", err, "retry_in", delay)
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return delay, nil
}

func (s *Server) setDefaults() {
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	if s.ReadTimeout <= 0 {
		s.ReadTimeout = ReadTimeout
	}
	if s.MaxInFlight <= 0 {
		s.MaxInFlight = MaxInFlight
	}
	s.selfUID = os.Geteuid()
	s.group = groupName(s.ControlGID)
}

// groupName is the name of gid for messages, or its number.
func groupName(gid int) string {
	if gid < 0 {
		return "none configured"
	}
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		return g.Name
	}
	return strconv.Itoa(gid)
}

// refuseBusy answers a connection beyond MaxInFlight without reading it.
// The socket is fresh, so the short write cannot block the accept loop.
func (s *Server) refuseBusy(conn *Conn) {
	defer conn.Close()
	s.Log.Warn("control: too many requests in flight, refusing one", "max", s.MaxInFlight)
	resp := Errorf(CodeFailed, "hinit is busy (%d requests in flight): try again in a moment", s.MaxInFlight)
	writeResponse(conn, resp, 100*time.Millisecond)
}

// logPanic is the last resort of a connection's goroutine: a bug in hinit
// must not take PID 1 down.
func (s *Server) logPanic(what string) {
	if r := recover(); r != nil {
		s.Log.Error("control: panic "+what, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	}
}
