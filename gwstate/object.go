package gwstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// object is a JSON object kept the way hermes wrote it: members in file
// order, each key as its original bytes and each value as its original
// JSON text (whitespace removed, nothing else changed: numbers keep their
// literal, strings their escapes). It lets hinit change two fields of a file
// it does not own without touching the meaning of any other.
//
// A key that occurs twice keeps its first position and its last value, the
// way Python's json module and encoding/json read such a file.
type object struct {
	members []member
	index   map[string]int // unescaped key -> position in members
}

type member struct {
	key   []byte          // the key's JSON string literal, quotes included
	value json.RawMessage // compact JSON text
}

// parseObject reads data, which must be exactly one JSON object.
func parseObject(data []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("%w: not a JSON object", ErrCorrupt)
	}
	o := &object{index: map[string]int{}}
	for dec.More() {
		if err := o.parseMember(dec, data); err != nil {
			return nil, err
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, fmt.Errorf("%w: unterminated object", ErrCorrupt)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: data after the object", ErrCorrupt)
	}
	return o, nil
}

// parseMember reads one "key": value pair. The key's raw bytes are cut out
// of data between the decoder's offsets: what lies there is whitespace, the
// comma before the member, and the key literal.
func (o *object) parseMember(dec *json.Decoder, data []byte) error {
	start := dec.InputOffset()
	tok, err := dec.Token()
	key, ok := tok.(string)
	if err != nil || !ok {
		return fmt.Errorf("%w: bad object key", ErrCorrupt)
	}
	rawKey := bytes.TrimLeft(data[start:dec.InputOffset()], " \t\r\n,")
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("%w: value of %q: %v", ErrCorrupt, key, err)
	}
	var value bytes.Buffer
	if err := json.Compact(&value, raw); err != nil {
		return fmt.Errorf("%w: value of %q: %v", ErrCorrupt, key, err)
	}
	if i, dup := o.index[key]; dup {
		o.members[i].value = value.Bytes()
		return nil
	}
	o.index[key] = len(o.members)
	o.members = append(o.members, member{key: bytes.Clone(rawKey), value: value.Bytes()})
	return nil
}

// set replaces the value of key, or appends key when it is not there.
func (o *object) set(key string, value any) error {
	b, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	if i, ok := o.index[key]; ok {
		o.members[i].value = b
		return nil
	}
	k, _ := json.Marshal(key)
	o.index[key] = len(o.members)
	o.members = append(o.members, member{key: k, value: b})
	return nil
}

// encode writes the object compactly, as hermes does.
func (o *object) encode() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o.members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m.key)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// desired is the desired_state member as a state, or "" when it is
// absent, not a string or not a state name.
func (o *object) desired() string {
	i, ok := o.index["desired_state"]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(o.members[i].value, &s) != nil || !validState(s) {
		return ""
	}
	return s
}
