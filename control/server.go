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
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
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
// the protocol's defaults (MaxInFlight, MaxPerUser, ...); tests shorten them.
type Server struct {
	Handler         Handler
	ControlGID      int // group whose members may use hsvc; < 0: none (only root and hinit's uid)
	Log             *slog.Logger
	ReadTimeout     time.Duration // time to send the request (ReadTimeout)
	MaxInFlight     int           // other users' requests at once (MaxInFlight)
	MaxPerUser      int           // of those, one uid's (MaxPerUser)
	MaxWaits        int           // other users' waits at once (MaxWaits)
	MaxWaitsPerUser int           // of those, one uid's (MaxWaitsPerUser)
	MaxRoot         int           // root's requests and waits at once (MaxRoot)

	group   atomic.Pointer[controlGroup] // ControlGID, or SetControlGID's
	selfUID int
	adm     *admission
	warn    *quietLog
}

// controlGroup is the group whose members may use hsvc, and its name for
// the permission message.
type controlGroup struct {
	gid  int
	name string
}

// SetControlGID changes the control group of a Server that serves already:
// hinit answers from the start of its boot ("booting"), and the boot hook
// may give the image's user another group (PGID).
func (s *Server) SetControlGID(gid int) {
	s.group.Store(&controlGroup{gid, groupName(gid)})
}

// Serve serves the control protocol on ln until ctx ends; see Server.
func Serve(ctx context.Context, ln *Listener, h Handler, controlGID int, log *slog.Logger) error {
	s := &Server{Handler: h, ControlGID: controlGID, Log: log}
	return s.Serve(ctx, ln)
}

// Serve accepts connections on ln until ctx ends, one goroutine for each
// connection its caller's share admits (Limits in the protocol); then
// it closes ln, waits for the requests in flight (their contexts are
// cancelled) and returns nil. It returns an error only when ln fails for
// good.
func (s *Server) Serve(ctx context.Context, ln *Listener) error {
	s.setDefaults()
	defer s.warn.close()
	// Each loop's spare descriptor is opened now, while there is room, and
	// closed once both loops and every connection are done (a connection
	// served with it refills it as it ends).
	rootSpare, spare := newSpare(), newSpare()
	defer rootSpare.close()
	defer spare.close()
	var wg sync.WaitGroup
	defer wg.Wait() // runs last: after cancel has ended the requests in flight
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	// Root's socket has a loop of its own: whatever waits in the other's
	// accept queue, root's connection is taken at once. Closing ln ends both.
	wg.Go(func() { s.acceptLoop(ctx, ln.root.acceptor, &wg, rootSpare, true) })
	return s.acceptLoop(ctx, ln.socket.acceptor, &wg, spare, false)
}

// acceptLoop accepts connections on a until ctx ends (nil) or a fails for
// good, and serves each admitted one in a goroutine of wg. With hinit's
// descriptor table full (EMFILE, ENFILE: services of the image's user can
// fill it), a connection would wait in the queue until its client gives
// up ("did not answer in time"): the loop's spare descriptor sp, given
// back for a moment, lets one in, which root's socket serves (a status, a
// stop) and the other answers with why, at once.
func (s *Server) acceptLoop(ctx context.Context, a *acceptor, wg *sync.WaitGroup, sp *spare, root bool) error {
	var delay time.Duration
	for {
		conn, err := a.Accept()
		lent := false
		if err != nil && outOfDescriptors(err) && sp.lend() {
			lent = true
			conn, err = a.acceptNow() // no wait with the spare's number free
		}
		if err != nil {
			if lent {
				sp.refill()
				if errors.Is(err, unix.EAGAIN) {
					continue // its client gave up meanwhile
				}
			}
			if ctx.Err() != nil {
				return nil
			}
			if delay, err = s.acceptFailed(ctx, err, delay); err != nil {
				return err
			}
			continue
		}
		if delay > 0 {
			s.Log.Info("control: accepting connections again")
			delay = 0
		}
		if lent {
			s.warn.Warn("control: hinit is out of file descriptors: a connection taken with the spare one", -1, "root", root)
			if !root {
				s.refuse(conn, Errorf(CodeFailed, "hinit is out of file descriptors: see its log (docker logs); root's hsvc is still answered"))
				sp.refill()
				continue
			}
		}
		if cred, sl := s.admit(conn); sl != nil {
			wg.Go(func() {
				defer sl.release()
				if lent {
					defer sp.refill() // once the connection is closed
				}
				s.serveConn(ctx, conn, cred, sl, lent)
			})
		} else if lent {
			sp.refill()
		}
	}
}

// outOfDescriptors reports whether err is an accept's for a full
// descriptor table, this process's or the system's.
func outOfDescriptors(err error) bool {
	return errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE)
}

// spare is a descriptor held back for a full descriptor table: closed, its
// number is free for one accept (lend); reopened once that connection is
// closed (refill), when the table has room for it again.
type spare struct {
	mu sync.Mutex
	f  *os.File // nil while lent, or when it could not be opened
}

func newSpare() *spare {
	sp := &spare{}
	sp.refill()
	return sp
}

// lend closes the spare descriptor; false when there is none to close
// (its refill found the table full; the table may have room again now).
func (sp *spare) lend() bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.refill0()
	if sp.f == nil {
		return false
	}
	sp.f.Close()
	sp.f = nil
	return true
}

// refill opens the spare descriptor again, if the table has room.
func (sp *spare) refill() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.refill0()
}

func (sp *spare) refill0() {
	if sp.f == nil {
		sp.f, _ = os.Open(os.DevNull)
	}
}

func (sp *spare) close() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.f != nil {
		sp.f.Close()
		sp.f = nil
	}
}

// admit identifies the peer of a new connection and takes a slot of its
// uid's share. A connection that cannot have one is answered and closed
// at once, without reading it: the socket is fresh, so that short write
// cannot block the accept loop.
func (s *Server) admit(conn *Conn) (*unix.Ucred, *slot) {
	cred, err := conn.peerCred()
	if err != nil {
		s.warn.Warn("control: refusing a connection: cannot tell who it is", -1, "err", err)
		s.refuse(conn, Errorf(CodePermission, "permission denied: hinit cannot tell who you are (%v)", err))
		return nil, nil
	}
	sl, err := s.adm.admit(int(cred.Uid))
	if err != nil {
		s.warn.Warn("control: refusing a connection: its user has too many open", int(cred.Uid), "err", err)
		s.refuse(conn, busy(err))
		return nil, nil
	}
	return cred, sl
}

// busy is the answer to a caller over its share.
func busy(err error) *Response {
	r := Errorf(CodeFailed, "%v: try again in a moment", err)
	r.Busy = true
	return r
}

// refuse answers a connection that will not be served, and closes it.
func (s *Server) refuse(conn *Conn, resp *Response) {
	writeResponse(conn, resp, 100*time.Millisecond)
	conn.Close()
}

// acceptFailed handles an Accept error: fatal when the listener is closed,
// otherwise (out of file descriptors, ...) logged, once per warnEvery with
// how many more, and retried after a growing delay, as net/http does, so
// that a full fd table does not spin nor fill the log; the first accept
// after says so (acceptLoop).
func (s *Server) acceptFailed(ctx context.Context, err error, delay time.Duration) (time.Duration, error) {
	if errors.Is(err, os.ErrClosed) {
		return 0, fmt.Errorf("accept: %w", err)
	}
	delay = min(max(2*delay, 5*time.Millisecond), time.Second)
	s.warn.Warn("control: accept failed, retrying", -1, "err", err, "retry_in", delay)
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
	orDefault(&s.MaxInFlight, MaxInFlight)
	orDefault(&s.MaxPerUser, MaxPerUser)
	orDefault(&s.MaxWaits, MaxWaits)
	orDefault(&s.MaxWaitsPerUser, MaxWaitsPerUser)
	orDefault(&s.MaxRoot, MaxRoot)
	s.adm = newAdmission(limits{root: s.MaxRoot, conns: s.MaxInFlight, connsPerUser: s.MaxPerUser,
		waits: s.MaxWaits, waitsPerUser: s.MaxWaitsPerUser})
	s.warn = newQuietLog(s.Log, warnEvery)
	s.selfUID = os.Geteuid()
	s.group.CompareAndSwap(nil, &controlGroup{s.ControlGID, groupName(s.ControlGID)}) // unless SetControlGID came first
}

// orDefault sets *n to def when it is not positive.
func orDefault(n *int, def int) {
	if *n <= 0 {
		*n = def
	}
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

// logPanic is the last resort of a connection's goroutine: a bug in hinit
// must not take PID 1 down.
func (s *Server) logPanic(what string) {
	if r := recover(); r != nil {
		s.Log.Error("control: panic "+what, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	}
}
