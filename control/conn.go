package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// writeTimeout bounds how long a response may take to leave: a client that
// does not read its answer cannot hold a slot for ever.
const writeTimeout = 5 * time.Second

// errTooLarge: the request line is longer than MaxRequest.
var errTooLarge = errors.New("request too large")

// serveConn runs one connection: credentials, request, response.
func (s *Server) serveConn(ctx context.Context, conn *Conn) {
	defer conn.Close()
	defer s.logPanic("serving a control connection")
	caller, err := s.callerOf(conn)
	if err != nil {
		s.Log.Warn("control: refusing connection", "err", err)
		writeResponse(conn, Errorf(CodePermission, "permission denied: hinit cannot tell who you are (%v)", err), writeTimeout)
		return
	}
	br := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(s.ReadTimeout))
	line, eof, err := readRequest(br)
	if err != nil {
		s.badRead(conn, caller, err)
		return
	}
	conn.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !eof {
		hungUp := make(chan struct{})
		go func() { br.ReadByte(); cancel(); close(hungUp) }()
		defer func() { <-hungUp }() // runs after conn.Close has unblocked ReadByte
		defer conn.Close()
	}
	resp := s.handle(ctx, caller, line)
	if err := writeResponse(conn, resp, writeTimeout); err != nil {
		s.Log.Debug("control: answer lost", "uid", caller.UID, "pid", caller.PID, "code", resp.Code, "err", err)
	}
}

// callerOf identifies the peer of conn.
func (s *Server) callerOf(conn *Conn) (Caller, error) {
	cred, err := conn.peerCred()
	if err != nil {
		return Caller{}, err
	}
	return callerOf(cred, s.ControlGID, s.selfUID), nil
}

// badRead answers a request that could not be read, when there is anyone
// left to answer.
func (s *Server) badRead(conn *Conn, c Caller, err error) {
	switch {
	case errors.Is(err, io.EOF):
		return // connected and left without a word
	case errors.Is(err, errTooLarge):
		s.Log.Warn("control: request too large", "uid", c.UID, "pid", c.PID)
		writeResponse(conn, Errorf(CodeUsage, "request too large: at most %d bytes", MaxRequest), writeTimeout)
	case errors.Is(err, os.ErrDeadlineExceeded):
		s.Log.Warn("control: no request in time, dropping connection", "uid", c.UID, "pid", c.PID)
		writeResponse(conn, Errorf(CodeUsage, "no request within %v: send one JSON line after connecting", s.ReadTimeout), writeTimeout)
	default:
		s.Log.Debug("control: read request", "uid", c.UID, "pid", c.PID, "err", err)
	}
}

// readRequest reads one line of at most MaxRequest bytes (newline
// excluded). eof reports that the line ended at EOF rather than a newline.
func readRequest(br *bufio.Reader) (line []byte, eof bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		switch {
		case err == nil:
			line = line[:len(line)-1]
			if len(line) > MaxRequest {
				return nil, false, errTooLarge
			}
			return line, false, nil
		case len(line) > MaxRequest:
			return nil, false, errTooLarge
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, true, nil
		}
		return nil, false, fmt.Errorf("read request: %w", err)
	}
}

// writeResponse sends resp as one line, giving up after timeout.
func writeResponse(conn *Conn, resp *Response, timeout time.Duration) error {
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(Errorf(CodeFailed, "hinit could not encode its answer: %v", err))
	}
	conn.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := conn.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	return nil
}
