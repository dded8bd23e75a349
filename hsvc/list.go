package hsvc

import (
	"fmt"

	"hinit/control"
)

// runList: hsvc list [--prefix P].
func runList(c *cli, args []string) error {
	fs := newFlags("list")
	prefix := fs.String("prefix", "", "only names that start with `P`")
	operands, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(operands) > 0 {
		return c.usageErr("unexpected %q", operands[0])
	}
	resp, err := c.do(&control.Request{Verb: control.VerbList, Prefix: *prefix}, 0)
	if err != nil {
		return err
	}
	var b []byte
	for _, n := range resp.Names {
		b = fmt.Appendln(b, n)
	}
	_, err = c.stdout.Write(b)
	return err
}
