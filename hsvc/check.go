package hsvc

import (
	"time"

	"hinit/control"
)

// runCheck: hsvc check, for HEALTHCHECK and Kubernetes probes. Silent when
// all is well; hinit's answer says what is not.
func runCheck(c *cli, args []string) error {
	operands, err := c.parse(newFlags("check"), args)
	if err != nil {
		return err
	}
	if len(operands) > 0 {
		return c.usageErr("unexpected %q", operands[0])
	}
	// Run as the image's user (a Kubernetes probe of the restricted
	// variant), check shares that user's requests with hermes' own hsvc
	// calls: a "busy" answer is asked again until the answer timeout is
	// up, so that a burst of them does not fail the probe.
	deadline := time.Now().Add(answerTimeout)
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		resp, err := c.do(&control.Request{Verb: control.VerbCheck}, time.Until(deadline))
		if resp == nil || !resp.Busy || time.Now().Add(wait).After(deadline) {
			return err
		}
		select {
		case <-time.After(wait):
		case <-c.ctx.Done():
			return err
		}
	}
}
