package hsvc

import (
	"hinit/control"
	"hinit/signame"
)

// runSignal: hsvc signal [--process] SIG NAME.
func runSignal(c *cli, args []string) error {
	fs := newFlags("signal")
	process := fs.Bool("process", false, "the service's process only, not its process group (as s6-svc and systemd's $MAINPID)")
	operands, err := c.parse(fs, args)
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
	req := &control.Request{Verb: control.VerbSignal, Names: operands[1:], Signal: signame.Name(sig), Process: *process}
	_, err = c.do(req, 0)
	return err
}
