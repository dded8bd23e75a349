package s6cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"hinit/asuser"
	"hinit/svclog"
)

const logSynopsis = "logging script (hinit's s6-log knows the directives 1, nN, sN, T and one log dir)"

// logScript is what an s6-log script asks for.
type logScript struct {
	stdout  bool   // 1: copy every line to stdout
	dir     string // the log dir
	keep    int    // nN: archives kept
	maxSize int64  // sN: rotate current at this size
}

// parseLogScript reads the directives hermes' log/run uses. Anything else
// is refused by name rather than half understood.
func parseLogScript(args []string) (*logScript, error) {
	sc := &logScript{keep: svclog.DefaultKeep, maxSize: svclog.DefaultMaxSize}
	for _, d := range args {
		switch {
		case d == "1":
			sc.stdout = true
		case d == "T": // svclog timestamps every line of the file
		case len(d) > 1 && (d[0] == 'n' || d[0] == 's') && isDigits(d[1:]):
			n, err := strconv.ParseInt(d[1:], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("directive %q: %w", d, err)
			}
			if d[0] == 'n' {
				sc.keep = int(n)
				if n == 0 {
					sc.keep = -1 // s6's n0: no archive kept
				}
			} else {
				sc.maxSize = max(n, 4096) // s6-log's smallest file size
			}
		case strings.HasPrefix(d, "/") || strings.HasPrefix(d, "."):
			if sc.dir != "" {
				return nil, fmt.Errorf("a second log dir %q: hinit's s6-log writes one", d)
			}
			sc.dir = d
		default:
			return nil, fmt.Errorf("directive %q is not supported by hinit's s6-log (it knows 1, nN, sN, T and one log dir)", d)
		}
	}
	if sc.dir == "" && !sc.stdout {
		return nil, fmt.Errorf("no action: give a log dir or 1")
	}
	return sc, nil
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// runLog is s6-log: lines from stdin to a rotated current in the log dir
// (svclog's format and rotation, what hinit's own service logs use) and,
// with 1, to stdout. SIGTERM ends it like EOF, after what was read is
// written.
func runLog(e *env, args []string) int {
	sc, err := parseLogScript(args)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: fatal: %v\n", e.prog, err)
		return e.usage(logSynopsis)
	}
	var out io.Writer = io.Discard
	if sc.stdout {
		out = os.Stdout
	}
	w := io.Writer(out)
	var l *svclog.Log
	if sc.dir != "" {
		groups, _ := os.Getgroups()
		l, err = svclog.New(svclog.Options{Name: "s6-log", Dir: sc.dir, MaxSize: sc.maxSize, Keep: sc.keep,
			Owner:  asuser.ID{UID: os.Getuid(), GID: os.Getgid(), Groups: groups},
			Logger: slog.New(slog.NewTextHandler(e.stderr, nil))})
		if err != nil {
			return e.fatal(exitSystem, "unable to open %s: %v", sc.dir, err)
		}
		w = io.MultiWriter(l.Writer(), out)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	go func() { <-sigs; os.Stdin.Close() }()
	_, cerr := io.Copy(w, os.Stdin)
	if l != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := l.Close(ctx); err != nil {
			return e.fatal(exitSystem, "%v", err)
		}
	}
	if cerr != nil && !errors.Is(cerr, os.ErrClosed) {
		return e.fatal(exitSystem, "unable to read stdin: %v", cerr)
	}
	return exitOK
}
