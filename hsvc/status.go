package hsvc

import (
	"encoding/json"

	"hinit/control"
	"hinit/svcname"
)

// runStatus: hsvc status [NAME...] [--json].
func runStatus(c *cli, args []string) error {
	fs := newFlags("status")
	asJSON := fs.Bool("json", false, "print JSON")
	names, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if err := c.checkNames(names); err != nil {
		return err
	}
	resp, err := c.do(&control.Request{Verb: control.VerbStatus, Names: names}, 0)
	if err != nil {
		return err
	}
	if *asJSON {
		return c.printJSON(resp.Services)
	}
	_, err = c.stdout.Write(formatTable(resp.Services, c.now()))
	return err
}

// printJSON prints {"services":[...]}, the form of SPEC §4, on one line.
func (c *cli) printJSON(services []control.Status) error {
	if services == nil {
		services = []control.Status{}
	}
	b, err := json.Marshal(struct {
		Services []control.Status `json:"services"`
	}{services})
	if err != nil {
		return exitf(control.CodeFailed, "encode status: %v", err)
	}
	_, err = c.stdout.Write(append(b, '\n'))
	return err
}

// oneName checks the operands of a verb that takes exactly one service.
func (c *cli) oneName(names []string) error {
	if len(names) != 1 {
		return c.usageErr("want exactly one service name")
	}
	return c.checkNames(names)
}

// checkNames refuses names no service can have before asking hinit.
func (c *cli) checkNames(names []string) error {
	for _, n := range names {
		if err := svcname.Check(n); err != nil {
			return c.usageErr("%v", err)
		}
	}
	return nil
}
