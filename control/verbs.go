package control

import (
	"context"
	"fmt"
)

// Arity is how many service names a verb takes, and whether "all" (the
// gateways) may stand for them.
type Arity int

// Arities of the verb table.
const (
	NoNames    Arity = iota // names and all must be empty
	AnyNames                // none (every service) or some; never all
	OneName                 // exactly one; never all
	NamesOrAll              // one or more, or all; never both
)

// Verb is one entry of the verb table: the argument rules of a verb.
// Validate checks a request against its entry, and a Mux dispatches it to
// the handler bound to the same entry, so that what passes validation is
// exactly what the handler was written for.
type Verb struct {
	Name     string
	Names    Arity
	ReadOnly bool                 // changes nothing: members may use it on protected services
	Options  func(*Request) error // checks the verb's own fields; nil: it has none
}

// verbTable is the protocol's verbs, in the order of the protocol comment.
var verbTable = []Verb{
	{Name: VerbStatus, Names: AnyNames, ReadOnly: true},
	{Name: VerbStart, Names: NamesOrAll},
	{Name: VerbStop, Names: NamesOrAll},
	{Name: VerbRestart, Names: NamesOrAll},
	{Name: VerbSignal, Names: OneName, Options: checkSignal},
	{Name: VerbRegister, Names: NoNames, Options: checkRegister},
	{Name: VerbUnregister, Names: OneName},
	{Name: VerbList, Names: NoNames, ReadOnly: true},
	{Name: VerbWait, Names: OneName, ReadOnly: true, Options: checkWait},
	{Name: VerbCheck, Names: NoNames, ReadOnly: true},
	{Name: VerbShutdown, Names: NoNames, Options: checkShutdown},
	{Name: VerbOnce, Names: NamesOrAll},
}

// LookupVerb returns the table entry of the verb called name.
func LookupVerb(name string) (Verb, bool) {
	for _, v := range verbTable {
		if v.Name == name {
			return v, true
		}
	}
	return Verb{}, false
}

// checkNames applies the entry's Arity to a request.
func (v Verb) checkNames(r *Request) error {
	n := len(r.Names)
	switch v.Names {
	case NoNames:
		if n > 0 || r.All {
			return invalidf("%s takes no service names", v.Name)
		}
	case AnyNames:
		if r.All {
			return invalidf("%s takes service names, not all", v.Name)
		}
	case OneName:
		if r.All {
			return invalidf("%s takes exactly one service name, not all", v.Name)
		}
		if n != 1 {
			return invalidf("%s takes exactly one service name, got %d", v.Name, n)
		}
	case NamesOrAll:
		switch {
		case r.All && n > 0:
			return invalidf("%s: give service names or all, not both", v.Name)
		case !r.All && n == 0:
			return invalidf("%s: no service named: give names or all", v.Name)
		}
	}
	return nil
}

// Mux is the verb table with a handler bound to each entry: the Handler
// of a supervisor. It only ever sees requests that passed Validate.
type Mux struct {
	slots map[string]HandlerFunc
}

// NewMux binds a handler to every verb of the table. A verb without a
// handler, or a handler for a verb the table does not have, is a
// programming error and panics, so that the table and the supervisor
// cannot drift apart.
func NewMux(handlers map[string]HandlerFunc) *Mux {
	m := &Mux{slots: make(map[string]HandlerFunc, len(verbTable))}
	for _, v := range verbTable {
		h, ok := handlers[v.Name]
		if !ok || h == nil {
			panic(fmt.Sprintf("control: no handler for verb %s", v.Name))
		}
		m.slots[v.Name] = h
	}
	for name := range handlers {
		if _, ok := m.slots[name]; !ok {
			panic(fmt.Sprintf("control: handler for unknown verb %s", name))
		}
	}
	return m
}

// Handle dispatches a validated request to its verb's handler.
func (m *Mux) Handle(ctx context.Context, c Caller, req *Request) *Response {
	h, ok := m.slots[req.Verb]
	if !ok {
		return Errorf(CodeUsage, "unknown verb %q", req.Verb)
	}
	return h(ctx, c, req)
}
