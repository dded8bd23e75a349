package hsvc

import (
	"context"
	"time"

	"hinit/control"
)

// Timeouts of the client side.
const (
	// answerTimeout bounds a request that does not wait: hinit answers
	// those at once, so a longer silence means it is stuck.
	answerTimeout = 2 * control.QuickAnswer
	// waitGrace is added to a wait's own timeout: hinit answers "timed
	// out" itself, with a better message than the client could.
	waitGrace = 5 * time.Second
	// defaultWait is the wait of a bare --wait.
	defaultWait = 60 * time.Second
)

// do sends req and returns the response of a request that succeeded.
// limit bounds the whole exchange: 0 means answerTimeout, < 0 none.
func (c *cli) do(req *control.Request, limit time.Duration) (*control.Response, error) {
	ctx := c.ctx
	if limit != 0 {
		c.interrupt()
	}
	if limit >= 0 {
		if limit == 0 {
			limit = answerTimeout
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	cl, err := control.Dial(c.sock)
	if err != nil {
		return nil, c.talkError(err)
	}
	defer cl.Close()
	resp, err := cl.Do(ctx, req)
	if err != nil {
		return nil, c.talkError(err)
	}
	if !resp.OK {
		err := exitf(resp.Code, "%s", resp.Error)
		if resp.Code == control.CodeNoService && len(req.Names) > 0 {
			err = c.noSuchService(err, req.Names)
		}
		return resp, err
	}
	return resp, nil
}

// interrupt makes SIGINT and SIGTERM end c.ctx from now on.
func (c *cli) interrupt() {
	if c.interruptible != nil {
		c.interruptible()
	}
}

// waitLimit is the client's bound for a request that waits up to d.
func waitLimit(d time.Duration) time.Duration {
	if d == 0 {
		return 0
	}
	return d + waitGrace
}
