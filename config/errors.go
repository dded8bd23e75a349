package config

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"hinit/errcap"
)

// Sentinel errors, checked with errors.Is.
var (
	// ErrInvalid is wrapped by every *Error: the file was read but is not a
	// valid configuration.
	ErrInvalid = errors.New("invalid configuration")
	// ErrUnknownTemplate: a Ref names a template hinit.yaml does not define.
	ErrUnknownTemplate = errors.New("no such template")
	// ErrInvalidInstance: a Ref's instance is not a valid instance name.
	ErrInvalidInstance = errors.New("invalid instance name")
)

// Problem is one thing wrong in a configuration file.
type Problem struct {
	File string
	Line int // 1-based; 0 when the problem is not tied to a line
	Msg  string
}

// String formats the problem as "file:line: msg", the form editors and
// terminals turn into a link.
func (p Problem) String() string {
	if p.Line <= 0 {
		return fmt.Sprintf("%s: %s", p.File, p.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
}

// Error is the problems found in one file or more, each file's in line
// order. Parsing goes on after the first problem so that an operator fixes
// a file in one pass. Each problem is cut to maxProblemLen. A service.yaml
// can hold thousands of problems (64 KiB of unknown keys), and its error
// lives as long as the broken definition, goes to the log and into every
// `hsvc status`: so its Error keeps the first MaxProblems (by line) and
// counts the others in More. hinit.yaml and its drop-ins, root's, keep
// every problem, for check-config to print (All). Error's text is Lines:
// about errcap.Max bytes at most, whatever the count.
type Error struct {
	Problems []Problem
	More     int // problems found beyond Problems
}

// MaxProblems is how many problems the Error of a service.yaml keeps.
const MaxProblems = 16

// maxProblemLen bounds one problem's line ("file:line: msg").
const maxProblemLen = 512

// Error joins the lines, one per line.
func (e *Error) Error() string { return strings.Join(e.Lines(), "\n") }

// Lines returns the problems as "file:line: msg" strings, for log lines
// and status (hinit's boot, a service.yaml): as many as fit in errcap.Max
// bytes (at least one), then "and N more problems" when some were left
// out, counting those not kept too.
func (e *Error) Lines() []string {
	return e.lines(errcap.Max)
}

// All returns every problem kept as a "file:line: msg" string, for `hinit
// check-config`, which a person runs to fix a file in one pass; "and N
// more problems" follows only when some were not kept (More).
func (e *Error) All() []string {
	return e.lines(-1)
}

// lines is Lines for at most max bytes; max < 0: no bound.
func (e *Error) lines(max int) []string {
	var lines []string
	size := 0
	for _, p := range e.Problems {
		l := errcap.Text(p.String(), maxProblemLen)
		if max >= 0 && len(lines) > 0 && size+len(l) > max {
			break
		}
		lines = append(lines, l)
		size += len(l) + 1
	}
	if more := e.More + len(e.Problems) - len(lines); more > 0 {
		lines = append(lines, fmt.Sprintf("and %d more problems", more))
	}
	return lines
}

// Unwrap makes errors.Is(err, ErrInvalid) true for every *Error.
func (e *Error) Unwrap() error { return ErrInvalid }

// problems collects the problems of one file as decoding goes: the
// MaxProblems of the lowest lines and how many others there were, or with
// all every one.
type problems struct {
	file string
	all  bool
	list []Problem
	more int
}

// add records a problem at line.
func (p *problems) add(line int, format string, args ...any) {
	if !p.keeps(line) {
		p.more++
		return
	}
	pr := Problem{File: p.file, Line: line, Msg: errcap.Text(fmt.Sprintf(format, args...), maxProblemLen)}
	if p.all || len(p.list) < MaxProblems {
		p.list = append(p.list, pr)
		return
	}
	p.more++
	last := p.highest()
	p.list = append(slices.Delete(p.list, last, last+1), pr)
}

// keeps reports whether a problem at line would be kept: there is room, or
// it comes before the last one kept.
func (p *problems) keeps(line int) bool {
	return p.all || len(p.list) < MaxProblems || line < p.list[p.highest()].Line
}

// highest is the index of the kept problem of the highest line (the
// latest such).
func (p *problems) highest() int {
	last := 0
	for i, q := range p.list {
		if q.Line >= p.list[last].Line {
			last = i
		}
	}
	return last
}

// err returns the collected problems as an *Error, or nil when there are none.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	list := append([]Problem(nil), p.list...)
	sort.SliceStable(list, func(i, j int) bool { return list[i].Line < list[j].Line })
	return &Error{Problems: list, More: p.more}
}
