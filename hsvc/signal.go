package hsvc

import (
	"slices"

	"hinit/control"
	"hinit/signame"
)

// runSignal: hsvc signal [--process] SIG NAME; kill(1)'s -SIG is taken
// for SIG.
func runSignal(c *cli, args []string) error {
	fs := newFlags("signal")
	process := fs.Bool("process", false, "the service's process only, not its process group (as s6-svc and systemd's $MAINPID)")
	operands, err := c.parse(fs, killSpelling(args))
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

// killSpelling is args with the first option that names a signal as
// kill(1) writes it (-9, -HUP, -SIGTERM) made the SIG operand. No option
// of signal's is a signal's name.
func killSpelling(args []string) []string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' {
			if _, err := signame.Parse(a[1:]); err == nil {
				out := slices.Clone(args)
				out[i] = a[1:]
				return out
			}
		}
	}
	return args
}
