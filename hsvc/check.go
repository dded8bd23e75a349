package hsvc

import "hinit/control"

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
	_, err = c.do(&control.Request{Verb: control.VerbCheck}, 0)
	return err
}
