// Package svclog is the logger of one supervised service: it reads the
// service's stdout and stderr from a pipe and writes them, line by line with
// a timestamp, to <dir>/current (rotated s6-log style) and, when asked, to
// the container's console as "[name] line".
//
// The write end of the pipe is handed to every instance of the service and
// outlives restarts, so no line is lost between instances. A reader
// goroutine moves lines from the pipe into a bounded queue per output, and a
// writer goroutine per output drains it while it holds lines. A burst faster
// than an output holds the service back (through the pipe) while the output
// moves; an output that makes no room for a second (stalled) or fails costs
// the service at most that second: its lines are dropped and counted, and
// the next line that can be written is preceded by (or, when no line
// follows, the output's writer writes once it has caught up)
//
//	hinit: N lines lost (reason)
//
// and Lost reports the total.
//
//	service ──pipe──▶ reader ──queue──▶ file writer    ──▶ <dir>/current, @<time>.s
//	                         └─queue──▶ console writer ──▶ Console ("[name] line")
//
// An idle Log is one goroutine waiting in Go's netpoller, with no read
// buffer and no writer goroutine: a thousand services cost neither a
// thousand threads nor a thousand buffers.
package svclog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"hinit/asuser"
)

// Defaults: MaxSize's for a zero field; DefaultKeep is what s6-log keeps
// when not told (hinit.yaml has its own default, also 10).
const (
	DefaultMaxSize = 1 << 20 // bytes of current before rotation
	DefaultKeep    = 10      // archives kept
)

// Options configure a Log.
type Options struct {
	Name    string // service name, the console prefix and the svc attribute
	Dir     string // log dir; "" means no log file
	MaxSize int64  // rotate current when a line would take it past this; 0 = DefaultMaxSize
	Keep    int    // archives kept: 0 (or negative) keeps none, as log.keep: 0 in hinit.yaml
	// Console gets a copy of each line as "[name] line\n", in one Write
	// call per line; nil means no copy. It is shared by all services, so
	// it must be safe for concurrent use and must not interleave two
	// Writes: an *os.File is (Go serializes Writes on one File and writes
	// each fully), and Serialize makes any writer so.
	Console io.Writer
	// Owner is the identity the log dir and files are created and
	// renamed with (through asuser.Do, never following a symlink).
	Owner  asuser.ID
	Logger *slog.Logger     // hinit's own log; nil = discard
	Now    func() time.Time // clock for timestamps and retries; nil = time.Now
}

// Log is the logger of one service. Its methods are safe for concurrent use.
type Log struct {
	opts   Options
	r, w   *os.File
	outs   []*output
	done   chan struct{} // closed when the reader and every output are finished
	closeW sync.Once

	// The reader is woken by a read deadline in the past: for good when
	// Close has given up waiting (stopped), or to end the current line for
	// the EndLine calls in enders, which it closes then.
	stopped atomic.Bool
	mu      sync.Mutex
	enders  []chan struct{} // guarded by mu
}

// New creates the pipe and starts the goroutines of a Log. Nothing is
// created on disk before the first line.
func New(opts Options) (*Log, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("log %s: create pipe: %w", opts.Name, err)
	}
	l := &Log{opts: opts, r: r, w: w, done: make(chan struct{})}
	log := opts.Logger.With("svc", opts.Name)
	if opts.Dir != "" {
		l.outs = append(l.outs, newOutput("file", newFileWriter(opts, log), filePool, log))
	}
	if opts.Console != nil {
		l.outs = append(l.outs, newOutput("console", consoleWriter{opts.Console, "[" + opts.Name + "] "}, consolePool, log))
	}
	go l.run(log)
	return l, nil
}

// Writer is the write end of the pipe, to be given to every instance of the
// service as its stdout and stderr. Passing it to a child calls Fd, which
// puts it in blocking mode: that is what children expect, and the read end
// hinit keeps is a separate file description that stays non-blocking.
func (l *Log) Writer() *os.File { return l.w }

// Path is the file being written, <dir>/current, or "" without a dir.
func (l *Log) Path() string { return CurrentPath(l.opts.Dir) }

// CurrentPath is the file a log dir's lines go to, <dir>/current, or ""
// for no dir: where a service's log will be before it has started.
func CurrentPath(dir string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, currentName)
}

// Lost is the number of lines that could not be written, summed over the
// outputs: a line missed by both the file and the console counts twice.
func (l *Log) Lost() uint64 {
	var n uint64
	for _, o := range l.outs {
		n += o.lost.Load()
	}
	return n
}

// Retire closes hinit's copy of the write end without waiting, for a Log
// that is given to no new process (the service's log settings changed):
// it finishes on its own, the last unterminated line written, once the
// processes holding the other copies are gone (Done). Close may follow.
func (l *Log) Retire() { l.closeW.Do(func() { l.w.Close() }) }

// Done is closed once the Log has finished: the pipe is closed on every
// side and every line read is written.
func (l *Log) Done() <-chan struct{} { return l.done }

// endLineWait bounds how long EndLine waits for the reader.
const endLineWait = 100 * time.Millisecond

// EndLine is called when an instance (or a finish program) has ended: what
// it wrote is read from the pipe without waiting for more, and a last line
// without its newline is written as a line of its own, now rather than when
// the pipe closes, and never joined to the next instance's first line. It
// returns once that is done, or after endLineWait. (The reader goes past a
// full output's bound for it, but past twice the bound, or while the pool
// of the output's kind is full, it waits for an output that moves: no line
// is lost, and the flush may come after EndLine returns, joined to the
// next instance's first line if that one is read before it.)
func (l *Log) EndLine() {
	c := make(chan struct{})
	l.mu.Lock()
	l.enders = append(l.enders, c)
	l.mu.Unlock()
	l.r.SetReadDeadline(time.Unix(1, 0)) // first: a rush ends at the reader's next read
	for _, o := range l.outs {
		o.q.rush() // a reader waiting on a full output must not hold the flush back
	}
	t := time.NewTimer(endLineWait)
	defer t.Stop()
	select {
	case <-c:
	case <-l.done:
	case <-t.C:
	}
}

// woken is the reader's answer to a read deadline, once it has read what
// the pipe holds: false when Close stopped it; otherwise it clears the
// deadline and ends the current line for the EndLine calls waiting. A
// deadline set after the clearing wakes it again: nothing is missed.
func (l *Log) woken(s *splitter) bool {
	l.r.SetReadDeadline(time.Time{})
	if l.stopped.Load() {
		return false
	}
	l.mu.Lock()
	enders := l.enders
	l.enders = nil
	l.mu.Unlock()
	if len(enders) > 0 {
		s.flush()
		for _, o := range l.outs {
			o.q.calm(len(enders))
		}
	}
	for _, c := range enders {
		close(c)
	}
	return true
}

// forcedWait bounds how long a Close past its ctx waits for the log file
// to take what the pipe and the reader still hold: at most the file's
// queue and a pipe's worth, milliseconds for a disk that works.
const forcedWait = 250 * time.Millisecond

// Close closes hinit's copy of the write end and waits until every process
// holding the other copies (instances, their children) has closed it, and
// every line read has been written, the last unterminated one included. When
// ctx ends first, reading stops once what is already in the pipe is read,
// and the console gives up: what it has not taken is lost to it, so that
// it no longer holds back the file, for which Close waits forcedWait more
// (a shutdown's deadline must not cost the log file lines because the
// console was slow). Close then returns an error that says which outputs
// did not finish; they go on in the background while the process lives.
func (l *Log) Close(ctx context.Context) error {
	l.closeW.Do(func() { l.w.Close() })
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		select {
		case <-l.done: // finished too: that wins
			return nil
		default:
		}
		l.stopped.Store(true)
		for _, o := range l.outs {
			if o.kind != "file" {
				o.q.giveUp()
			}
		}
		l.r.SetReadDeadline(time.Unix(1, 0))
		t := time.NewTimer(forcedWait)
		defer t.Stop()
	files:
		for _, o := range l.outs {
			if o.kind == "file" {
				select {
				case <-o.done:
				case <-t.C:
					break files
				}
			}
		}
		var behind []string
		for _, o := range l.outs {
			select {
			case <-o.done:
			default:
				behind = append(behind, o.kind)
			}
		}
		if len(behind) == 0 {
			return nil
		}
		return fmt.Errorf("close log %s: %w: the %s did not get the last lines", l.opts.Name, context.Cause(ctx), strings.Join(behind, " and the "))
	}
}

// run reads lines until the pipe is closed, then waits for the outputs.
func (l *Log) run(log *slog.Logger) {
	s := &splitter{now: l.opts.Now, emit: func(ln line) {
		for _, o := range l.outs {
			o.push(ln)
		}
	}}
	if err := readPipe(l.r, s, func() bool { return l.woken(s) }); err != nil {
		log.Warn("log reading stopped", "err", err)
	}
	l.r.Close()
	for _, o := range l.outs {
		o.finish()
	}
	for _, o := range l.outs {
		<-o.done
	}
	close(l.done)
}

// Serialize wraps w so that concurrent Writes never interleave, for a
// Console that is not an *os.File.
func Serialize(w io.Writer) io.Writer { return &lockedWriter{w: w} }

type lockedWriter struct {
	mu sync.Mutex // serializes Writes to w
	w  io.Writer
}

func (lw *lockedWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.w.Write(p)
}
