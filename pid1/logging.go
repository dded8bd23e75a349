package pid1

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"

	"hinit/svclog"
)

// lineHandler writes hinit's own log as one plain line per record:
//
//	hinit: started svc=web pid=12
//	hinit: warning: planned-stop marker not written svc=gateway-coder err=...
//
// No timestamp: docker logs and kubectl logs add their own.
type lineHandler struct {
	mu    *sync.Mutex
	out   *io.Writer // shared by derived handlers, swappable (TTY mode)
	level slog.Leveler
	attrs string
}

func newLineHandler(w io.Writer, level slog.Leveler) *lineHandler {
	return &lineHandler{mu: new(sync.Mutex), out: &w, level: level}
}

// writeRaw writes p as it is where the lines go, under their lock: a boot
// hook's output (copyHookOutput).
func (h *lineHandler) writeRaw(p []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	(*h.out).Write(p)
}

// setOutput redirects the log, e.g. away from a terminal main owns.
func (h *lineHandler) setOutput(w io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.out = w
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("hinit: ")
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString("error: ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("warning: ")
	}
	b.WriteString(r.Message)
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, a)
		return true
	})
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(*h.out, b.String())
	return err
}

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	for _, a := range as {
		writeAttr(&b, a)
	}
	return &lineHandler{mu: h.mu, out: h.out, level: h.level, attrs: h.attrs + b.String()}
}

func (h *lineHandler) WithGroup(string) slog.Handler { return h }

func writeAttr(b *strings.Builder, a slog.Attr) {
	v := a.Value.Resolve().String()
	if v == "" || strings.ContainsAny(v, " \t\n\"=") {
		v = strconv.Quote(v)
	}
	fmt.Fprintf(b, " %s=%s", a.Key, v)
}

// setupOutput makes hinit's log and the services' console stream. With a
// terminal both are held back from the start, so that main's screen is
// main's from its first byte (termgate.go). hinit's own lines go through a
// svclog.Stream, so that a stderr nobody reads (docker's log driver stuck
// in its blocking mode) costs PID 1 a second per stall, not its life: a
// logging goroutine blocked in that write would block the shutdown too.
// The services' console copies have the same rule in their own queues.
func (h *hinit) setupOutput() {
	level, err := h.opts.logLevel(os.Getenv("HINIT_LOG_LEVEL"), h.set.bare)
	h.tty = holdsForeground(0)
	if h.tty {
		h.ttyModes = terminalModes(0)
	}
	h.errOut = svclog.NewStream(os.Stderr)
	h.stderr = h.errOut
	h.errGate = newGate(h.errOut, isTerminal(2), true)
	h.outGate = newGate(os.Stdout, isTerminal(1), false)
	if h.tty {
		h.errGate.hold()
		h.outGate.hold()
	}
	h.logh = newLineHandler(h.errGate, level)
	h.log = slog.New(h.logh)
	if err != nil {
		h.log.Warn(err.Error())
	}
}

// logToStderrAgain sends hinit's lines to stderr again once main has
// exited, or will never start (a boot hook stopped the boot, main cannot
// be executed): the terminal is nobody's then (docs/image.md). They go on
// to hinit.log too, which keeps the whole session: the shutdown's lines
// and why main never ran reach the user and docker logs, where hinit.log
// goes with the container.
func (h *hinit) logToStderrAgain() {
	if h.ttyLog != nil {
		h.logh.setOutput(io.MultiWriter(h.errGate, &ttyLog{f: h.ttyLog, path: h.ttyLog.Name()})) // still bounded
	}
}

// parseLevel reads HINIT_LOG_LEVEL: debug, info (default), warn or error.
func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if s == "" {
		return slog.LevelInfo, nil
	}
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo, fmt.Errorf("HINIT_LOG_LEVEL=%q: want debug, info, warn or error", s)
	}
	return l, nil
}
