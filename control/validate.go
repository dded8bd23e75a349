package control

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"hinit/signame"
	"hinit/svcname"
)

// ErrInvalid matches (errors.Is) every error of Validate:
// the request is malformed, and retrying it unchanged cannot help.
var ErrInvalid = errors.New("invalid request")

// invalidError is a validation error whose message is meant for the user
// as it is, without a prefix; it matches ErrInvalid.
type invalidError string

func (e invalidError) Error() string        { return string(e) }
func (e invalidError) Is(target error) bool { return target == ErrInvalid }

func invalidf(format string, a ...any) error {
	return invalidError(fmt.Sprintf(format, a...))
}

// Validate checks what can be checked without the supervisor: version,
// verb, and the shape of the fields the verb uses. The server answers a
// request that fails it with CodeUsage, so handlers can rely on it. It
// also drops repeated names, keeping the first of each: a request of 60 KB
// naming one gateway 5,000 times made PID 1 write its state file 5,000
// times, fsynced, past hsvc's patience.
func (r *Request) Validate() error {
	if len(r.Names) > 1 {
		seen := make(map[string]bool, len(r.Names))
		r.Names = slices.DeleteFunc(slices.Clone(r.Names), func(n string) bool {
			dup := seen[n]
			seen[n] = true
			return dup
		})
	}
	if r.V != Version {
		return invalidf("protocol version %d, this hinit speaks %d: use the hsvc that came with this image", r.V, Version)
	}
	verb, ok := LookupVerb(r.Verb)
	if !ok {
		return invalidf("unknown verb %q", r.Verb)
	}
	if err := verb.checkNames(r); err != nil {
		return err
	}
	for _, n := range r.Names {
		if err := svcname.Check(n); err != nil {
			return invalidf("%v", err)
		}
	}
	if _, err := r.Timeout(); err != nil {
		return err
	}
	if verb.Options == nil {
		return nil
	}
	return verb.Options(r)
}

// Timeout is the request's wait as a duration (0 when empty); see the
// protocol comment for what 0 means for each verb.
func (r *Request) Timeout() (time.Duration, error) {
	if r.Wait == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(r.Wait)
	if err != nil || d < 0 {
		return 0, invalidf("wait %q is not a duration like 30s or 2m", r.Wait)
	}
	return d, nil
}

func checkSignal(r *Request) error {
	if r.Signal == "" && r.Restart {
		return nil // the service's own stop signal
	}
	if _, err := signame.Parse(r.Signal); err != nil {
		return invalidf("%v", err)
	}
	return nil
}

func checkRegister(r *Request) error {
	if err := svcname.CheckInstance(r.Template, r.Instance); err != nil {
		return invalidf("register: %v", err)
	}
	for k, v := range r.Env {
		if err := svcname.CheckEnvVar(k, v); err != nil {
			return invalidf("register: %v", err)
		}
	}
	return nil
}

func checkWait(r *Request) error {
	switch r.Until {
	case UntilUp, UntilReady, UntilDown, UntilGone:
		return nil
	}
	return invalidf("wait: until must be up, ready, down or gone, not %q", r.Until)
}

func checkShutdown(r *Request) error {
	if r.ExitCode != nil && (*r.ExitCode < 0 || *r.ExitCode > 255) {
		return invalidf("shutdown: exit code %d is not in 0..255", *r.ExitCode)
	}
	return nil
}
