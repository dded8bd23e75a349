package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"hinit/svcname"
)

// decoder walks a yaml.Node tree and records every problem with its line.
// It never stops at the first problem: each helper reports and returns a
// usable value so that decoding goes on.
type decoder struct {
	problems
	reconcileTemplate *yaml.Node // reconcile.template, checked once every file is read
	// strLeft is how many more bytes of strings a scandir definition may
	// decode (aliases count each time they are used); -1: no limit.
	strLeft int
	strOver bool // strLeft ran out: reported once
}

// MaxDefinitionStrings bounds the bytes of all the strings a service.yaml
// of the scandir decodes to, each alias counted every time it is used: as
// much as the file itself may hold (scandir.MaxYAMLSize). An anchor of
// 40 KiB named 8000 times in command made PID 1 copy 330 MB for every start
// (exec's argv), and a nested ${V-...} named as often held it for minutes.
const MaxDefinitionStrings = 64 << 10

// newDecoder decodes file keeping the MaxProblems of its lowest lines and
// counting the others: a service.yaml of the scandir, which the hermes
// user writes and whose error lives as long as its dir.
func newDecoder(file string) *decoder {
	return &decoder{problems: problems{file: file}, strLeft: MaxDefinitionStrings}
}

// newRootDecoder decodes file keeping every problem found: root's own
// configuration (hinit.yaml and its drop-ins, which Load refuses when
// another user may write them), whose error only ever ends a boot or a
// check-config.
func newRootDecoder(file string) *decoder {
	return &decoder{problems: problems{file: file, all: true}, strLeft: -1}
}

// at records a problem about node n; path (e.g. "services.web.restart")
// prefixes the message when not empty.
func (d *decoder) at(n *yaml.Node, path, format string, args ...any) {
	line := 1
	if n != nil && n.Line > 0 {
		line = n.Line
	}
	if !d.keeps(line) {
		d.more++ // not formatted: thousands of problems cost a count each
		return
	}
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	d.add(line, "%s", msg)
}

// document parses data and returns its root node, or nil when the file holds
// no document (empty or only comments) or cannot be parsed.
func (d *decoder) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if !errors.Is(err, io.EOF) {
			d.syntax(err, data)
		}
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		d.at(&extra, "", "a second YAML document is not allowed, expected one document")
	case !errors.Is(err, io.EOF):
		d.syntax(err, data)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil
	}
	d.tags(doc.Content[0])
	return Unalias(doc.Content[0])
}

// plainTags are the explicit tags a file may use: they say what the value
// already is (!!str 0100). Any other (!!binary, !!timestamp, !custom) asks
// for a reading hinit does not do: the value would be taken as written,
// `command: !!binary aGVsbG8=` run as the command aGVsbG8=.
var plainTags = map[string]bool{"!!str": true, "!!int": true, "!!float": true, "!!bool": true,
	"!!null": true, "!!map": true, "!!seq": true, "!": true}

// tags reports each explicit tag of n's tree that is not one of plainTags
// (an alias's target is reported where it is written).
func (d *decoder) tags(n *yaml.Node) {
	if n == nil || n.Kind == yaml.AliasNode {
		return
	}
	if n.Style&yaml.TaggedStyle != 0 && !plainTags[n.ShortTag()] {
		d.at(n, "", "the tag %s is not supported: write the value itself", quote(n.ShortTag()))
	}
	for _, c := range n.Content {
		d.tags(c)
	}
}

// parserProblems are the yaml.v3 (v3.0.1) parser errors, as opposed to
// scanner errors. yaml.v3 reports their line 0-based (it adds 1 only for
// scanner errors), so syntax adds it.
var parserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"did not find expected key":              true,
	"did not find expected '-' indicator":    true,
	"did not find expected node content":     true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found duplicate %TAG directive":         true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// syntax records a YAML syntax error at the line of the problem: the line
// yaml.v3 names (1 if none, the last line of data if past the end of a cut
// file), or one syntax finds where yaml.v3 names none or only the start of
// the block the problem is in (findProblem).
func (d *decoder) syntax(err error, data []byte) {
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	line := 0
	msg = strings.TrimPrefix(msg, "yaml: ")
	// yaml.v3 says "line N: " before most syntax errors.
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, after, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				line, msg = n, after
			}
		}
	}
	if parserProblems[msg] || line <= 0 {
		line++
	}
	last := bytes.Count(data, []byte("\n"))
	if !bytes.HasSuffix(data, []byte("\n")) {
		last++
	}
	if line > last && last > 0 {
		line = last
	}
	if msg == "found character that cannot start any token" && tabIndented(data, line) {
		d.add(line, "invalid YAML: a tab indents this line; YAML indents with spaces")
		return
	}
	switch at, ok := findProblem(msg, data, line, last); {
	case ok && at != line && parserProblems[msg]:
		d.add(at, "invalid YAML: %s (in the block that starts at line %d)", msg, line)
	case ok:
		d.add(at, "invalid YAML: %s", msg)
	default:
		d.add(line, "invalid YAML: %s", msg)
	}
}

// tabIndented reports whether line n (from 1) of data has a tab in its
// indentation.
func tabIndented(data []byte, n int) bool {
	lines := bytes.SplitN(data, []byte("\n"), n+1)
	if n < 1 || n > len(lines) {
		return false
	}
	l := lines[n-1]
	return bytes.IndexByte(l[:len(l)-len(bytes.TrimLeft(l, " \t"))], '\t') >= 0
}

// findProblem finds the line of a problem yaml.v3 does not place: its
// reader's (a control character, a byte that is not UTF-8) and an unknown
// alias name no line, and its parser names the line where the block the
// problem is in starts (from). For the parser's, it is the first line
// whose end makes the file fail with the same message, found by halving
// (a file cut after a line before the problem parses, and one cut after
// the problem fails alike): about log2(lines) parses, whatever the file.
func findProblem(msg string, data []byte, from, last int) (int, bool) {
	switch {
	case strings.Contains(msg, "control characters are not allowed") || strings.Contains(msg, "UTF-8"):
		if i := firstUnreadable(data); i >= 0 {
			return lineAt(data, i), true
		}
	case strings.HasPrefix(msg, "unknown anchor '"):
		name := strings.TrimSuffix(strings.TrimPrefix(msg, "unknown anchor '"), "' referenced")
		if i := bytes.Index(data, []byte("*"+name)); i >= 0 {
			return lineAt(data, i), true
		}
	case parserProblems[msg]:
		fails := func(n int) bool { // the first n lines
			var doc yaml.Node
			err := yaml.Unmarshal(firstLines(data, n), &doc)
			return err != nil && strings.HasSuffix(err.Error(), msg)
		}
		if !fails(last) {
			return 0, false
		}
		lo, hi := from, last // fails(hi); the answer is in [lo, hi]
		for lo < hi {
			if mid := (lo + hi) / 2; fails(mid) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return hi, true
	}
	return 0, false
}

// firstUnreadable is the offset of the first byte YAML may not hold: a
// control character other than tab, newline and carriage return (C0, DEL,
// C1 but NEL), or a byte that is not UTF-8; -1 when there is none.
func firstUnreadable(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return i
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7f, r >= 0x80 && r <= 0x9f && r != 0x85:
			return i
		}
		i += n
	}
	return -1
}

// lineAt is the line (from 1) of the byte at offset i.
func lineAt(data []byte, i int) int { return 1 + bytes.Count(data[:i], []byte("\n")) }

// firstLines is data up to the end of its line n (from 1).
func firstLines(data []byte, n int) []byte {
	end := 0
	for ; n > 0 && end < len(data); n-- {
		i := bytes.IndexByte(data[end:], '\n')
		if i < 0 {
			return data
		}
		end += i + 1
	}
	return data[:end]
}

// Unalias follows an alias to the node it names (a few hops at most); the
// one rule for hinit.yaml, service.yaml and hermes' config.yaml alike.
func Unalias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 8; i++ {
		n = n.Alias
	}
	return n
}

// isNull reports an absent value: `key:`, `key: ~` or `key: null`.
func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names what a node holds, for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "null"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.ScalarNode:
		return quote(n.Value)
	}
	return "an unresolved alias"
}

// quote quotes a value from the file for a message: one line, not too long.
func quote(s string) string { return svcname.Quote(s) }

// join appends a mapping key to a message path, quoting keys that would
// make the path ambiguous or span lines.
func join(path, key string) string {
	if !plainKey(key) {
		key = quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// index appends a list index to a message path.
func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func plainKey(k string) bool {
	if k == "" || len(k) > 64 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_.-/+@", c) >= 0) {
			return false
		}
	}
	return true
}

// entry is one key: value pair of a mapping, the value resolved.
type entry struct {
	key  string
	k, v *yaml.Node
}

// entries returns the pairs of mapping n in file order. Null is an empty
// mapping; anything else that is not a mapping is reported. Duplicate keys
// and non-string keys are reported and skipped.
func (d *decoder) entries(n *yaml.Node, path string) []entry {
	n = Unalias(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.at(n, path, "expected a mapping, got %s", describe(n))
		return nil
	}
	seen := make(map[string]int, len(n.Content)/2)
	out := make([]entry, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := Unalias(n.Content[i]), Unalias(n.Content[i+1])
		switch {
		case k.Kind != yaml.ScalarNode:
			d.at(k, path, "expected a string key, got %s", describe(k))
			continue
		case k.ShortTag() == "!!merge":
			d.at(k, join(path, k.Value), "merge keys are not supported, write the keys out")
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.at(k, join(path, k.Value), "defined twice (first at line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		out = append(out, entry{key: k.Value, k: k, v: v})
	}
	return out
}

// unknown reports a key that is not valid where it is.
func (d *decoder) unknown(e entry, path, expected string) {
	d.at(e.k, join(path, e.key), "unknown key (expected one of %s)", expected)
}

// items returns the elements of list n, resolved. Null is an empty list.
func (d *decoder) items(n *yaml.Node, path string) []*yaml.Node {
	n = Unalias(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.at(n, path, "expected a list, got %s", describe(n))
		return nil
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out[i] = Unalias(c)
	}
	return out
}

// str decodes a string. Any scalar is taken as written (`port: 9119` is
// "9119"); null is "". Strings cannot hold NUL: exec could not pass them.
func (d *decoder) str(n *yaml.Node, path string) string {
	s, _ := d.strOK(n, path)
	return s
}

// strOK is str, and false when it reported a problem: a caller that
// checks the value further says nothing more about it (one line for one
// problem).
func (d *decoder) strOK(n *yaml.Node, path string) (string, bool) {
	if isNull(n) {
		return "", true
	}
	if n.Kind != yaml.ScalarNode {
		d.at(n, path, "expected a string, got %s", describe(n))
		return "", false
	}
	if strings.IndexByte(n.Value, 0) >= 0 {
		d.at(n, path, "contains a NUL byte, which no program argument or variable can hold")
		return "", false
	}
	if d.strLeft >= 0 {
		if len(n.Value) > d.strLeft {
			if !d.strOver {
				d.strOver = true
				d.at(n, path, "the definition's strings come to more than %d bytes (aliases count each time they are used); write a shorter one", MaxDefinitionStrings)
			}
			return "", false
		}
		d.strLeft -= len(n.Value)
	}
	return n.Value, true
}

// strList decodes a list of strings.
func (d *decoder) strList(n *yaml.Node, path string) []string {
	items := d.items(n, path)
	if items == nil {
		return nil
	}
	out := make([]string, len(items))
	for i, c := range items {
		out[i] = d.str(c, index(path, i))
	}
	return out
}

// boolTo decodes true or false into *dst.
func (d *decoder) boolTo(dst *bool, n *yaml.Node, path string) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool" {
		if err := n.Decode(dst); err == nil {
			return
		}
	}
	d.at(n, path, "expected true or false, got %s", describe(n))
}

// intTo decodes an integer of at least min into *dst. It is read in
// decimal, as exit codes are: YAML would read 0100 as octal 64.
func (d *decoder) intTo(dst *int, n *yaml.Node, path string, min int) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		d.at(n, path, "expected an integer, got %s", describe(n))
		return
	}
	v, err := strconv.Atoi(strings.ReplaceAll(n.Value, "_", "")) // 1_000, as YAML writes it
	if err != nil {
		d.at(n, path, "%s is not a decimal integer", quote(n.Value))
		return
	}
	if v < min {
		d.at(n, path, "%d is too small, expected %d or more", v, min)
		return
	}
	*dst = v
}
