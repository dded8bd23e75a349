package hsvc

import (
	"time"

	"hinit/control"
)

// runWait: hsvc wait NAME --up|--ready|--down [--timeout DUR].
func runWait(c *cli, args []string) error {
	fs := newFlags("wait")
	up := fs.Bool("up", false, "until a process runs (starting or up)")
	ready := fs.Bool("ready", false, "until it is up and ready")
	down := fs.Bool("down", false, "until no process runs")
	timeout := fs.Duration("timeout", 0, "give up after `DUR` (exit 6); default: never")
	names, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if err := c.oneName(names); err != nil {
		return err
	}
	until, err := c.until(*up, *ready, *down)
	if err != nil {
		return err
	}
	if *timeout < 0 {
		return c.usageErr("--timeout must not be negative")
	}
	req := &control.Request{Verb: control.VerbWait, Names: names, Until: until}
	limit := time.Duration(-1) // no limit of our own: hinit answers when the state is reached
	if *timeout > 0 {
		req.Wait = timeout.String()
		limit = waitLimit(*timeout)
	}
	_, err = c.do(req, limit)
	return err
}

// until picks the one target state of a wait.
func (c *cli) until(up, ready, down bool) (string, error) {
	var picked []string
	for _, t := range []struct {
		set  bool
		name string
	}{{up, control.UntilUp}, {ready, control.UntilReady}, {down, control.UntilDown}} {
		if t.set {
			picked = append(picked, t.name)
		}
	}
	if len(picked) != 1 {
		return "", c.usageErr("give exactly one of --up, --ready, --down")
	}
	return picked[0], nil
}
