package hsvc

import "hinit/control"

// runUnregister: hsvc unregister NAME [--wait[=DUR]].
func runUnregister(c *cli, args []string) error {
	fs := newFlags("unregister")
	var wait optDuration
	fs.Var(&wait, "wait", "wait up to `DUR` ("+defaultWait.String()+" when alone) until it is stopped and gone")
	names, err := c.parse(fs, optionalValue(args, "wait", defaultWait.String()))
	if err != nil {
		return err
	}
	if err := c.oneName(names); err != nil {
		return err
	}
	req := &control.Request{Verb: control.VerbUnregister, Names: names, Wait: wait.String()}
	_, err = c.do(req, waitLimit(wait.d))
	return err
}
