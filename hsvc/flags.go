package hsvc

import (
	"errors"
	"flag"
	"io"
	"strings"
	"time"

	"hinit/svcname"
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
// operand. Flags are spelled -name or --name, with =VALUE or the next
// argument as the value of a flag that takes one (a one-letter one's may
// also be stuck to it: -n5); -h, -help and --help
// ask for the verb's help (errHelp, with fs kept for it). A mistake is
// one usage error that spells the flag as --name and says what is wrong.
func (c *cli) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(operands, args[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			operands = append(operands, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		f := fs.Lookup(name)
		if f == nil && a[1] != '-' && !hasValue && len(name) > 1 {
			// getopt's value stuck to a one-letter flag: -n5 is -n 5.
			if g := fs.Lookup(name[:1]); g != nil && !isBool(g) {
				f, name, value, hasValue = g, name[:1], name[1:], true
			}
		}
		switch {
		case f == nil && (name == "h" || name == "help"):
			c.flags = fs
			return nil, errHelp
		case f == nil:
			return nil, c.usageErr("unknown option %s%s", a, c.didYouMean(name, flagNames(fs), "--"))
		case isBool(f) && !hasValue:
			value = "true"
		case !hasValue && i+1 == len(args):
			return nil, c.usageErr("%s needs a value", spell(name))
		case !hasValue:
			i++
			value = args[i]
		}
		if err := fs.Set(name, value); err != nil {
			return nil, c.usageErr("%s %q: %s", spell(name), value, why(f, err))
		}
	}
	return operands, nil
}

// spell writes a flag as the help shows it: -n, --json.
func spell(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// isBool reports a flag that takes no value.
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// why says what is wrong with a flag's value: the flag package's own
// types only say "parse error".
func why(f *flag.Flag, err error) string {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return err.Error()
	}
	switch g.Get().(type) {
	case time.Duration:
		return "not a duration like 30s or 2m"
	case int:
		return "not a whole number"
	case bool:
		return "not true or false"
	}
	return err.Error()
}

// flagNames lists fs's flags as --name, for suggestions.
func flagNames(fs *flag.FlagSet) []string {
	var out []string
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f.Name) })
	return out
}

// isOptional reports a flag whose value may be left out (--wait).
func isOptional(f *flag.Flag) bool {
	_, ok := f.Value.(*optDuration)
	return ok
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
		return errors.New("not a duration like 30s or 2m, above 0")
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
		return errors.New("not K=V")
	}
	if err := svcname.CheckEnvVar(k, v); err != nil {
		return err // before JSON turns a byte that is not UTF-8 into U+FFFD
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
