package control

// Caller is who sent a request, as the kernel reports it (SO_PEERCRED) at
// connect time. The server lets through only callers that are Root or
// Member; the Handler uses May for the finer rules of SPEC §4.
type Caller struct {
	UID, GID, PID int
	Root          bool // uid 0: may do everything
	Member        bool // in the control group (primary or supplementary), or hinit's own uid
}

// May reports whether the caller may run verb on a service; protected is
// that service's `protected: true` (false for verbs that name no service).
// Root may do everything; members everything but shutdown and changing
// protected services; anyone else nothing.
func (c Caller) May(verb string, protected bool) bool {
	switch {
	case c.Root:
		return true
	case !c.Member:
		return false
	case verb == VerbShutdown:
		return false
	case protected:
		v, _ := LookupVerb(verb)
		return v.ReadOnly
	}
	return true
}
