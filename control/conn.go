package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// writeTimeout bounds how long a response may take to leave: a client that
// does not read its answer cannot hold a slot for ever.
const writeTimeout = 5 * time.Second

// errTooLarge: the request line is longer than MaxRequest.
var errTooLarge = errors.New("request too large")

// serveConn runs one admitted connection: request, response. A long
// request moves its slot to the waits first (or is answered busy); one
// taken with the accept loop's spare descriptor (spared: hinit is out of
// descriptors) is refused, as it would hold the spare for its whole wait.
func (s *Server) serveConn(ctx context.Context, conn *Conn, cred *unix.Ucred, sl *slot, spared bool) {
	defer conn.Close()
	defer s.logPanic("serving a control connection")
	caller := callerOf(cred, func() ([]int, error) { return conn.peerGroups(int(cred.Pid)) }, s.group.Load().gid, s.selfUID)
	br := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(s.ReadTimeout))
	// Once the server stops, a request still to come is not waited for:
	// hinit's exit waits for Serve, and a silent client held it.
	stopped := context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Unix(1, 0)) })
	line, eof, err := readRequest(br)
	if !stopped() || err != nil {
		if ctx.Err() != nil {
			writeResponse(conn, Errorf(CodeFailed, "hinit is exiting: request not served"), writeTimeout)
		} else {
			s.badRead(conn, caller, err)
		}
		return
	}
	conn.SetReadDeadline(time.Time{})
	req, resp := s.decode(caller, line)
	if resp == nil && req.long() && eof {
		// Its hang-up could not be seen (a read at EOF answers at once):
		// it would hold its slot until the wait ended, whoever had left.
		resp = Errorf(CodeUsage, "a request that waits (wait, --wait) must end with a newline and keep the connection open until its answer")
	}
	if resp == nil && req.long() && spared {
		// Taken with the loop's spare descriptor, which it would keep
		// for the whole wait: root's next request would find none.
		resp = Errorf(CodeFailed, "hinit is out of file descriptors: a request that waits cannot be served now; see its log (docker logs)")
	}
	if resp == nil && req.long() {
		if err := sl.toWait(); err != nil {
			s.warn.Warn("control: refusing a wait: its user has too many open", caller.UID, "err", err)
			resp = busy(err)
		}
	}
	if resp == nil {
		resp = s.serve(ctx, conn, br, eof, caller, req)
	}
	if err := writeResponse(conn, resp, writeTimeout); err != nil {
		s.Log.Debug("control: answer lost", "uid", caller.UID, "pid", caller.PID, "code", resp.Code, "err", err)
	}
}

// serve calls the Handler for a valid request, with a context that ends
// when the client hangs up (or sends more), unless the request ended at
// EOF (then it is a short one).
func (s *Server) serve(ctx context.Context, conn *Conn, br *bufio.Reader, eof bool, c Caller, req *Request) *Response {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !eof {
		hungUp := make(chan struct{})
		go func() {
			// A peer that only shut down its writes still reads its
			// answer: a short request of it stays asked for. A long
			// one's must keep its side open (its close would not be
			// seen after a half-close: its wait would hold a slot).
			if _, err := br.ReadByte(); !errors.Is(err, io.EOF) || req.long() || conn.peerGone() {
				cancel()
			}
			close(hungUp)
		}()
		defer func() { <-hungUp }() // runs after SetReadDeadline has unblocked ReadByte
		defer conn.SetReadDeadline(time.Unix(1, 0))
	}
	return s.handle(ctx, c, req)
}

// badRead answers a request that could not be read, when there is anyone
// left to answer.
func (s *Server) badRead(conn *Conn, c Caller, err error) {
	switch {
	case errors.Is(err, io.EOF):
		return // connected and left without a word
	case errors.Is(err, errTooLarge):
		s.warn.Warn("control: request too large", c.UID, "pid", c.PID)
		writeResponse(conn, Errorf(CodeUsage, "request too large: at most %d bytes", MaxRequest), writeTimeout)
	case errors.Is(err, os.ErrDeadlineExceeded):
		s.warn.Warn("control: no request in time, dropping connection", c.UID, "pid", c.PID)
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

// writeResponse sends resp as one line, giving up after timeout. '<', '>'
// and '&' are written as they are, not as 6-byte escapes: the answer is no
// HTML, and a status repeats strings the hermes user chose in every row.
func writeResponse(conn *Conn, resp *Response, timeout time.Duration) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // Encode ends the line
	enc.SetEscapeHTML(false)
	if err := enc.Encode(resp); err != nil {
		b.Reset()
		enc.Encode(Errorf(CodeFailed, "hinit could not encode its answer: %v", err))
	}
	conn.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := conn.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	return nil
}
