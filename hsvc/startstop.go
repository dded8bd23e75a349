package hsvc

import "hinit/control"

// runWant is start, stop and restart, which differ only in the verb:
// hsvc start|stop|restart NAME... | --all [--wait[=DUR]].
func runWant(verb string) func(c *cli, args []string) error {
	return func(c *cli, args []string) error {
		fs := newFlags(verb)
		all := fs.Bool("all", false, "every gateway (each instance of the gateway template), never other services")
		var wait optDuration
		fs.Var(&wait, "wait", "wait up to `DUR` ("+defaultWait.String()+" when alone) until up and staying up (start, restart) or down (stop)")
		names, err := c.parse(fs, optionalValue(args, "wait", defaultWait.String()))
		if err != nil {
			return err
		}
		switch {
		case *all && len(names) > 0:
			return c.usageErr("give service names or --all, not both")
		case !*all && len(names) == 0:
			return c.usageErr("no service name given")
		}
		if err := c.checkNames(names); err != nil {
			return err
		}
		req := &control.Request{Verb: verb, Names: names, All: *all, Wait: wait.String()}
		_, err = c.do(req, waitLimit(wait.d))
		return err
	}
}
