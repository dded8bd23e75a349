package hsvc

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// newFlags is a flag set that reports nothing itself: hsvc prints its own
// one-line errors.
func newFlags(verb string) *flag.FlagSet {
	fs := flag.NewFlagSet(verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args with flags anywhere among the operands (hsvc start
// NAME --wait), and returns the operands. Everything after "--" is an
// operand.
func (c *cli) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var operands []string
	for {
		err := fs.Parse(args)
		switch {
		case errors.Is(err, flag.ErrHelp):
			return nil, errHelp
		case err != nil:
			return nil, c.usageErr("%v", err)
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(operands, rest...), nil
		}
		if len(rest) == 0 {
			return operands, nil
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}

// optDuration is a flag with an optional value: --wait alone means
// defaultWait (see optionalValue), --wait=DUR means DUR. Its String is the
// request's Wait.
type optDuration struct {
	d   time.Duration
	set bool
}

func (o *optDuration) String() string {
	if o == nil || !o.set {
		return ""
	}
	return o.d.String()
}

func (o *optDuration) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q is not a duration like 30s or 2m", s)
	}
	o.d, o.set = d, true
	return nil
}

// envFlag collects repeated --env K=V.
type envFlag map[string]string

func (e envFlag) String() string { return "" }

func (e envFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not K=V", s)
	}
	e[k] = v
	return nil
}

// optionalValue gives a flag with an optional value its default when it
// stands alone (--wait becomes --wait=1m0s); the flag package has no
// such flags of its own. "--wait 30s" is read as --wait=30s: a service
// named like a duration is less likely than a user who forgot the "=".
func optionalValue(args []string, name, def string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if a == "-"+name || a == "--"+name {
			if i+1 < len(args) && isDuration(args[i+1]) {
				a, i = a+"="+args[i+1], i+1
			} else {
				a += "=" + def
			}
		}
		out = append(out, a)
	}
	return out
}

func isDuration(s string) bool {
	_, err := time.ParseDuration(s)
	return err == nil
}
