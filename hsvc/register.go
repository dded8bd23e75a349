package hsvc

import "hinit/control"

// runRegister: hsvc register TEMPLATE INSTANCE [--down] [--env K=V]...
func runRegister(c *cli, args []string) error {
	fs := newFlags("register")
	down := fs.Bool("down", false, "register without starting")
	env := envFlag{}
	fs.Var(env, "env", "`K=V` for the instance's environment (repeatable)")
	operands, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(operands) != 2 {
		return c.usageErr("want a template and an instance name")
	}
	req := &control.Request{V: control.Version, Verb: control.VerbRegister, Template: operands[0], Instance: operands[1], Down: *down}
	if len(env) > 0 {
		req.Env = env
	}
	if err := req.Validate(); err != nil {
		return c.usageErr("%v", err)
	}
	_, err = c.do(req, 0)
	return err
}
