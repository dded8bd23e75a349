package hsvc

import (
	"hinit/control"
	"hinit/signame"
)

// runSignal: hsvc signal SIG NAME.
func runSignal(c *cli, args []string) error {
	operands, err := c.parse(newFlags("signal"), args)
	if err != nil {
		return err
	}
	if len(operands) != 2 {
		return c.usageErr("want a signal and one service name")
	}
	sig, err := signame.Parse(operands[0])
	if err != nil {
		return c.usageErr("%v", err)
	}
	if err := c.checkNames(operands[1:]); err != nil {
		return err
	}
	req := &control.Request{Verb: control.VerbSignal, Names: operands[1:], Signal: signame.Name(sig)}
	_, err = c.do(req, 0)
	return err
}
