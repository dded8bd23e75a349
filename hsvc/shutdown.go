package hsvc

import (
	"flag"

	"hinit/control"
)

// runShutdown: hsvc shutdown [--exit-code N].
func runShutdown(c *cli, args []string) error {
	fs := newFlags("shutdown")
	code := fs.Int("exit-code", -1, "the container's exit status `N`, 0..255")
	operands, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(operands) > 0 {
		return c.usageErr("unexpected %q", operands[0])
	}
	req := &control.Request{Verb: control.VerbShutdown}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "exit-code" })
	if set {
		if *code < 0 || *code > 255 {
			return c.usageErr("--exit-code %d is not in 0..255", *code)
		}
		req.ExitCode = code
	}
	_, err = c.do(req, 0)
	return err
}
