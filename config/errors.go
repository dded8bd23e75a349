package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"
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

// Error is every problem found in one file, in line order. Parsing goes on
// after the first problem so that an operator fixes a file in one pass.
type Error struct {
	Problems []Problem
}

// Error joins the problems, one per line.
func (e *Error) Error() string { return strings.Join(e.Lines(), "\n") }

// Lines returns the problems as "file:line: msg" strings, one per problem,
// for `hinit check-config` and log lines.
func (e *Error) Lines() []string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return lines
}

// Unwrap makes errors.Is(err, ErrInvalid) true for every *Error.
func (e *Error) Unwrap() error { return ErrInvalid }

// problems collects the problems of one file as decoding goes.
type problems struct {
	file string
	list []Problem
}

// add records a problem at line.
func (p *problems) add(line int, format string, args ...any) {
	p.list = append(p.list, Problem{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// err returns the collected problems as an *Error, or nil when there are none.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	list := append([]Problem(nil), p.list...)
	sort.SliceStable(list, func(i, j int) bool { return list[i].Line < list[j].Line })
	return &Error{Problems: list}
}
