package control

import (
	"fmt"
	"strings"

	"hinit/errcap"
)

// Exit codes of hsvc (SPEC §4), carried in Response.Code so that the server
// decides them and hsvc only passes them on.
const (
	CodeOK          = 0 // done
	CodeFailed      = 1 // hinit tried and it did not work
	CodeUsage       = 2 // the request itself is wrong
	CodeNoService   = 3 // no such service
	CodePermission  = 4 // the caller may not do this
	CodeUnreachable = 5 // hinit is not reachable (set by the client side only)
	CodeTimeout     = 6 // a wait ran out of time
)

// OK is the response to a request that was done.
func OK() *Response { return &Response{V: Version, OK: true} }

// Errorf is a failed response with code and a one-line message; newlines in
// the message are flattened so that hsvc's error stays one line.
func Errorf(code int, format string, a ...any) *Response {
	if code == CodeOK {
		code = CodeFailed
	}
	return &Response{V: Version, Code: code, Error: oneLine(fmt.Sprintf(format, a...))}
}

// oneLine joins the lines of s with "; ", and cuts it to errcap.Max bytes.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if strings.ContainsAny(s, "\r\n") {
		s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), "; ")
	}
	return errcap.Text(s, errcap.Max)
}

// normalize makes a handler's response consistent before it goes on the
// wire: version set, OK exactly when Code is 0, a failure always with a
// message, the message one line.
func normalize(r *Response, verb string) *Response {
	if r == nil {
		return Errorf(CodeFailed, "hinit gave no answer to %s: see hinit's log", verb)
	}
	r.V = Version
	if !r.OK && r.Code == CodeOK {
		r.Code = CodeFailed
	}
	r.OK = r.Code == CodeOK
	r.Error = oneLine(r.Error)
	if !r.OK && r.Error == "" {
		r.Error = fmt.Sprintf("%s failed (code %d): see hinit's log", verb, r.Code)
	}
	if r.OK {
		r.Error, r.Unrecorded, r.Busy = "", false, false
	}
	return r
}
