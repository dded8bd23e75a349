package supervise

import (
	"context"
	"os"
	"time"

	"hinit/config"
)

// stdio is what a service's processes get instead of /dev/null for stdin
// and the log for stdout, when it is one end of a service-and-logger pair
// (an s6 servicedir with log/run). The runner holds its end for as long as
// the service exists, so that a restart of either side loses no line: the
// pipe's buffer keeps what the service wrote while its logger restarts.
type stdio struct {
	in  *os.File // the logger's stdin: the pipe's read end
	out *os.File // the service's stdout: the pipe's write end
}

// files is the fd table of a process: stdin, stdout, stderr. stderr stays
// on the service's own log (the container's stdout), as under s6.
func (io stdio) files(devnull, log *os.File) []uintptr {
	files := []uintptr{devnull.Fd(), log.Fd(), log.Fd()}
	if io.in != nil {
		files[0] = io.in.Fd()
	}
	if io.out != nil {
		files[1] = io.out.Fd()
	}
	return files
}

// closeOut closes the service's end of the pipe, so that its logger reads
// to the end: for a service that never starts again.
func (io *stdio) closeOut() {
	if io.out != nil {
		io.out.Close()
		io.out = nil
	}
}

func (io stdio) close() {
	if io.in != nil {
		io.in.Close()
	}
	if io.out != nil {
		io.out.Close()
	}
}

// loggerDrain bounds how long a removed service's logger may take to read
// what is left in the pipe before it is stopped.
const loggerDrain = 2 * time.Second

// addWithLogger adds def and its logger (def.Logger, always up) joined by a
// pipe. The logger is listed under its own name and goes when def goes.
// Caller holds g.mu.
func (g *Group) addWithLogger(def *config.Service, up bool) (*Service, error) {
	if _, ok := g.services[def.Logger.Name]; ok {
		return nil, ErrExists
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	logger := newService(g.ctx, g.deps, def.Logger, true, stdio{in: pr})
	s := newService(g.ctx, g.deps, def, up, stdio{out: pw})
	s.logger = logger
	for _, x := range []*Service{logger, s} {
		g.services[x.name] = x
		g.order = append(g.order, x.name)
	}
	g.membershipChanged()
	return s, nil
}

// stopLogger stops the logger l of a service that has stopped for good
// (its runner closed its end of the pipe then): l reads to the pipe's end
// and exits by itself, for at most loggerDrain and never past deadline;
// then it gets its stop signal like every service at shutdown.
func stopLogger(ctx context.Context, l *Service, deadline time.Time) {
	l.sendCtx(ctx, command{op: opOnce}) // at EOF it ends; nothing is left to restart it for
	dctx, cancel := context.WithDeadline(ctx, earliest(deadline, time.Now().Add(loggerDrain)))
	l.WaitFor(dctx, func(st Status) bool { return !st.Running() })
	cancel()
	l.Shutdown(ctx, deadline)
	l.WaitFor(ctx, func(st Status) bool { return !st.Running() && st.State != StateBackoff })
}

// earliest is the earlier of a and b.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// removeLogger removes s's logger once s is gone and the logger has read
// the pipe to its end (or after loggerDrain), so that it logs every line s
// wrote.
func (g *Group) removeLogger(s *Service, requested bool) {
	<-s.Done()
	s.logger.Once() // at EOF it ends; nothing is left to restart it for
	ctx, cancel := context.WithTimeout(g.ctx, loggerDrain)
	defer cancel()
	s.logger.WaitFor(ctx, func(st Status) bool { return !st.Running() })
	s.logger.Remove(requested)
	<-s.logger.Done()
	g.mu.Lock()
	delete(g.draining, s.logger)
	g.mu.Unlock()
}
