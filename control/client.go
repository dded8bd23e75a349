package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Sentinel errors of the client, checked with errors.Is.
var (
	// ErrUnreachable: nothing answers at the socket path (no hinit, or not
	// this container's). hsvc exits CodeUnreachable.
	ErrUnreachable = errors.New("hinit is not reachable")
	// ErrPermission: the socket exists but the caller may not connect to it
	// (mode 0660, not in the control group). hsvc exits CodePermission.
	ErrPermission = errors.New("permission denied")
)

// maxResponse bounds a response line; status of services_max services
// fits many times over.
const maxResponse = 64 << 20

// dialTimeout bounds connect(2), which blocks only when hinit's accept
// backlog is full.
const dialTimeout = 5 * time.Second

// SocketPath is the control socket's path for an environment lookup
// (os.Getenv): $HINIT_RUNTIME_DIR/control.sock, /run/hinit by default.
func SocketPath(getenv func(string) string) string {
	return filepath.Join(RuntimeDir(getenv), SocketName)
}

// Client sends requests to hinit, one connection per request (the
// protocol's rule). Dial opens the first connection, so that an absent
// hinit shows at once; each Do uses up a connection and the next one dials
// again.
type Client struct {
	path string
	conn *Conn // opened by Dial, not yet used; nil after
}

// Dial connects to the control socket at path. The error wraps
// ErrUnreachable or ErrPermission.
func Dial(path string) (*Client, error) {
	c := &Client{path: path}
	conn, err := c.dial()
	if err != nil {
		return nil, err
	}
	c.conn = conn
	return c, nil
}

// Close releases a connection Dial opened and Do did not use.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn = nil
	return err
}

// dial connects to the control socket; root goes through root's own
// socket beside it when there is one (a hinit of before it has none).
func (c *Client) dial() (*Conn, error) {
	if os.Geteuid() == 0 {
		if conn, err := dialUnix(filepath.Join(filepath.Dir(c.path), RootSocketName), dialTimeout); err == nil {
			return conn, nil
		}
	}
	conn, err := dialUnix(c.path, dialTimeout)
	switch {
	case err == nil:
		return conn, nil
	case errors.Is(err, fs.ErrPermission):
		return nil, fmt.Errorf("connect %s: %w: %w", c.path, ErrPermission, err)
	}
	return nil, fmt.Errorf("connect %s: %w: %w", c.path, ErrUnreachable, err)
}

// Do sends req (with V set to Version) and returns hinit's response. A
// failed request is a Response with a non-zero Code, not an error; the
// error is for talking itself: ErrUnreachable, ErrPermission, or ctx's
// error when it ends first (which also tells hinit to stop waiting).
func (c *Client) Do(ctx context.Context, req *Request) (*Response, error) {
	conn := c.conn
	c.conn = nil
	if conn == nil {
		var err error
		if conn, err = c.dial(); err != nil {
			return nil, err
		}
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	r := *req
	r.V = Version
	resp, err := exchange(conn, &r)
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("%s: %w", r.Verb, context.Cause(ctx))
	}
	return resp, err
}

// exchange writes the request line and reads the response line. A failed
// write is not the end: the server may have answered already (request too
// large, busy) and that answer says more than EPIPE.
func exchange(conn *Conn, req *Request) (*Response, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", req.Verb, err)
	}
	_, werr := conn.Write(append(b, '\n'))
	resp, rerr := readResponse(conn)
	switch {
	case rerr == nil:
		return resp, nil
	case werr != nil:
		return nil, fmt.Errorf("send %s request: %w", req.Verb, werr)
	}
	return nil, rerr
}

// readResponse reads and decodes one response line.
func readResponse(conn io.Reader) (*Response, error) {
	br := bufio.NewReader(&limitedReader{conn, maxResponse})
	line, err := br.ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return nil, fmt.Errorf("read answer: hinit closed the connection without one: %w", err)
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return nil, fmt.Errorf("read answer: malformed response: %w", err)
	}
	if resp.V != Version {
		return nil, fmt.Errorf("read answer: hinit speaks protocol version %d, this hsvc %d: use the hsvc that came with this image", resp.V, Version)
	}
	return &resp, nil
}

// limitedReader stops reading after n bytes, so that a broken peer cannot
// make the client buffer without end.
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("response longer than %d bytes", maxResponse)
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}
