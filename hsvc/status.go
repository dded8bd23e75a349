package hsvc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"hinit/control"
	"hinit/svcname"
)

// runStatus: hsvc status [NAME...] [--json].
func runStatus(c *cli, args []string) error {
	fs := newFlags("status")
	asJSON := fs.Bool("json", false, "print JSON")
	names, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if err := c.checkNames(names); err != nil {
		return err
	}
	resp, err := c.do(&control.Request{Verb: control.VerbStatus, Names: names}, 0)
	if err != nil {
		return err
	}
	if *asJSON {
		return c.printJSON(resp.Services)
	}
	_, err = c.stdout.Write(formatTable(resp.Services, c.now()))
	return err
}

// printJSON prints {"services":[...]}, the form of SPEC §4, on one line:
// <, > and & as they are (a jq user reads a reason, not HTML), and, in
// the strings a service's owner chose, DEL, C1 and bidirectional controls
// escaped as encoding/json escapes C0 (\u009b, \u202e), which it passes
// raw: hsvc runs in root's terminal too. The JSON decodes the same.
func (c *cli) printJSON(services []control.Status) error {
	if services == nil {
		services = []control.Status{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Services []control.Status `json:"services"`
	}{services}); err != nil {
		return exitf(control.CodeFailed, "encode status: %v", err)
	}
	escaped := func(r rune) bool { return r >= 0x7f && unprintable(r) } // C0 is encoding/json's
	out := b.Bytes()
	if bytes.ContainsFunc(out, escaped) {
		out = nil
		for s := b.Bytes(); len(s) > 0; {
			r, n := utf8.DecodeRune(s) // valid: encoding/json wrote it
			if escaped(r) {
				out = fmt.Appendf(out, `\u%04x`, r)
			} else {
				out = append(out, s[:n]...)
			}
			s = s[n:]
		}
	}
	_, err := c.stdout.Write(out)
	return err
}

// oneName checks the operands of a verb that takes exactly one service.
func (c *cli) oneName(names []string) error {
	if len(names) != 1 {
		return c.usageErr("want exactly one service name")
	}
	return c.checkNames(names)
}

// checkNames refuses names no service can have before asking hinit.
func (c *cli) checkNames(names []string) error {
	for _, n := range names {
		if err := svcname.Check(n); err != nil {
			return c.usageErr("%v", err)
		}
	}
	return nil
}
