// Package control is the language hinit and hsvc speak over hinit's control
// socket: the request and response types, the server that checks who is
// calling before any request reaches the supervisor, and the client hsvc
// uses. It knows nothing about how services are supervised; hinit plugs its
// supervisor in as a Handler, so hsvc never links the supervisor.
package control

import "time"

// Version is the protocol version carried in every request and response.
// A server answers a request of another version with CodeUsage.
//
// Protocol, version 1
//
//	socket   $HINIT_RUNTIME_DIR/control.sock (default /run/hinit/control.sock),
//	         unix stream, mode 0660, owner root, group = the image's user's group;
//	         root.sock beside it, mode 0600, the same protocol for root only
//	         (the client of a root caller prefers it), so that no other user's
//	         connections queue in front of root's
//
//	client                                   server (hinit)
//	  connect ───────────────────────────────▶ accept; SO_PEERCRED → Caller
//	                                           (caller's share full: answer
//	                                           "busy" with "busy":true, close;
//	                                           see Limits)
//	  {"v":1,"verb":"start",...}\n ──────────▶ read one line, ≤ MaxRequest bytes,
//	                                           within ReadTimeout (5 s); otherwise
//	                                           answer CodeUsage and close
//	                                           neither root nor member of the
//	                                           control group: CodePermission,
//	                                           the Handler is never called
//	                                           bad JSON, version or verb: CodeUsage
//	                                           Handler.Handle(ctx, caller, req)
//	  ◀────────────── {"v":1,"ok":true,...}\n  one response line, then close
//
// One request per connection. The client keeps its side open and sends
// nothing more until it has read the response: the server treats the peer
// closing its connection (or sending more) as "nobody is waiting any more"
// and cancels the handler's context: a wait ends, a start or stop not yet
// applied is not. A peer that only shuts down its writes after a short
// request (shutdown(SHUT_WR), `nc -N`) still reads: that is no hang-up; after
// a long one it is. A
// request line that ends at EOF without a newline is served when it is short;
// a long one is refused (CodeUsage): its hang-up could not be seen, and it
// would hold its slot after its client had gone.
//
// When hinit exits, the server stops: a request not yet read is answered
// "hinit is exiting" (CodeFailed), the handlers' contexts are cancelled,
// and hinit writes every answer in flight before it is gone (at most a
// second: a client that does not read its answer may lose it).
//
// Verbs and the fields they use (every request carries v and verb). The
// table of verbs (verbs.go) holds these rules once: Validate checks them
// and a Mux dispatches by them, so a handler only sees what its rule lets
// through ("all" with a name for a one-name verb is a usage error).
//
//	status      names (none = every service)            → services
//	start       names | all, wait, once                  want up (once: for one run only)
//	stop        names | all, wait                        want down
//	restart     names | all, wait                        stop, then start
//	signal      names (exactly one), signal, process,    signal the process group
//	            restart                                  (process: the process only;
//	                                                     restart: the exit it causes
//	                                                     is a requested restart; with
//	                                                     restart, no signal: the stop
//	                                                     signal of the running
//	                                                     definition, s6-svc -r's)
//	register    template, instance, down, env            → names (the new service)
//	unregister  names (exactly one), wait                stop, forget, remove its dir once stopped
//	list        prefix, scandir                          → names, sorted
//	wait        names (exactly one), until, wait,        block until the state
//	            not_pid, patient                         (and, with not_pid, another process)
//	once        names | all                              the running process is not restarted
//	                                                     when it exits; a down service stays down
//	check       —                                        ok unless an essential service failed
//	shutdown    exit_code (optional, 0..255), scandir    root only
//
// "all" means the gateway instances (SPEC §4). "wait" is a Go duration:
// for start/stop/restart/unregister "" means do not wait (the answer comes
// within QuickAnswer); for the verb wait it is the timeout and "" means no
// limit. "until" is up (a process is running: starting or up), ready
// (state up) or down (no process: down, exited, failed). start and
// restart with a wait answer ok once each service is up and has stayed up
// for a moment (2 s, or the rest of the wait when shorter), and fail with
// the reason when it lands in exited, backoff or failed instead. A wait
// that runs out answers CodeTimeout; what was asked goes on regardless
// (an unregistered service's dir is removed once it has stopped). The verb
// wait fails at once when the service will not get there without another
// request (up or ready: it is down by choice, exited or failed); a patient
// wait (s6-svwait) waits on all the same, and takes a service backing off
// for down, as s6 does: no process runs. With scandir (a dir's device and
// inode), list and shutdown answer CodeNoService unless that dir is the
// scandir hinit watches; without it they do not look.
//
// The response's code is the exit code hsvc exits with (Code* below); ok is
// true exactly when code is 0; error is one line that says what to do.
// unrecorded marks a start, stop, restart, register or unregister of
// gateways that was done but whose desired_state could not be recorded
// for the next boot: hsvc fails (code 1), and s6-svc, which real s6 lets
// record nothing, warns and succeeds.
//
// Compatibility: fields are only ever added. A change that alters the
// meaning of a field bumps Version.
const Version = 1

// Limits of the server, part of the protocol so that clients can rely on
// them. Root has its own share of the server, so no other user can keep
// root (and the health check, which runs as root) from an answer; each
// other uid has a share of its own inside the share of all non-root users.
// A slot is taken once the kernel has said who connected (SO_PEERCRED),
// before anything is read; a long request (the verb wait, or a verb with
// wait) then moves to the waits and frees its request slot. A connection
// beyond a share is answered "hinit is busy" (code 1) and closed.
const (
	MaxRequest      = 64 << 10        // longest request line, newline excluded
	ReadTimeout     = 5 * time.Second // time a client has to send its request
	MaxInFlight     = 64              // non-root connections being read or served at once, waits excluded
	MaxPerUser      = 16              // of those, from one uid
	MaxWaits        = 256             // non-root long requests at once
	MaxWaitsPerUser = 64              // of those, from one uid
	MaxRoot         = 64              // root's connections at once, waits included
	// QuickAnswer bounds how long hinit takes to answer a request that
	// does not wait (empty wait): long operations are answered "accepted"
	// at once, or within this. Clients allow more than this before they
	// call hinit stuck.
	QuickAnswer = 5 * time.Second
)

// Socket location, see SPEC §2.
const (
	DefaultRuntimeDir = "/run/hinit"
	RuntimeDirEnv     = "HINIT_RUNTIME_DIR"
	SocketName        = "control.sock"
	RootSocketName    = "root.sock" // beside SocketName, mode 0600: root's own way in
)

// Verbs of the protocol, one per hsvc verb except logs (which asks status
// for the log path and reads the file itself).
const (
	VerbStatus     = "status"
	VerbStart      = "start"
	VerbStop       = "stop"
	VerbRestart    = "restart"
	VerbSignal     = "signal"
	VerbRegister   = "register"
	VerbUnregister = "unregister"
	VerbList       = "list"
	VerbWait       = "wait"
	VerbCheck      = "check"
	VerbShutdown   = "shutdown"
	VerbOnce       = "once" // s6-svc -O; start with Once is s6-svc -o
)

// Targets of the verb wait (Request.Until).
const (
	UntilUp    = "up"
	UntilReady = "ready"
	UntilDown  = "down"
	// UntilGone: the process has exited, its finish program may still
	// run (s6-svwait -d; down is -D).
	UntilGone = "gone"
)

// Request is one command to hinit. Which fields a verb reads is listed in
// the protocol comment above; the others are left empty.
type Request struct {
	V        int               `json:"v"`
	Verb     string            `json:"verb"`
	Names    []string          `json:"names,omitempty"`
	All      bool              `json:"all,omitempty"`
	Wait     string            `json:"wait,omitempty"`  // Go duration
	Until    string            `json:"until,omitempty"` // UntilUp, UntilReady, UntilDown or UntilGone
	Signal   string            `json:"signal,omitempty"`
	Template string            `json:"template,omitempty"`
	Instance string            `json:"instance,omitempty"`
	Down     bool              `json:"down,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	ExitCode *int              `json:"exit_code,omitempty"`
	Prefix   string            `json:"prefix,omitempty"`
	Once     bool              `json:"once,omitempty"`    // start: want up for one run, then down
	NotPID   int               `json:"not_pid,omitempty"` // wait: also until the pid is another one
	Process  bool              `json:"process,omitempty"` // signal: the process only, not its group (s6-svc)
	Restart  bool              `json:"restart,omitempty"` // signal: the exit it causes restarts at once, no failure (s6-svc -t, -r...)
	Patient  bool              `json:"patient,omitempty"` // wait: until the state or the timeout, whatever else happens (s6-svwait)
	// Scandir: list, shutdown: act only when this is the dir hinit's
	// scandir watcher watches, else answer CodeNoService (s6-svscanctl
	// DIR, which s6 refuses for a dir no s6-svscan scans).
	Scandir *DirID `json:"scandir,omitempty"`
}

// DirID is a dir by identity, as stat(2) gives it: what names it whatever
// path, relative or through a symlink, the caller reached it by.
type DirID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// Response is hinit's answer. Code is the exit code of hsvc.
type Response struct {
	V        int      `json:"v"`
	OK       bool     `json:"ok"`
	Code     int      `json:"code"`
	Error    string   `json:"error,omitempty"`
	Services []Status `json:"services,omitempty"`
	Names    []string `json:"names,omitempty"`
	// Unrecorded: done, but its desired_state not recorded (Error says
	// why); never with ok.
	Unrecorded bool `json:"unrecorded,omitempty"`
	// Busy: refused because the caller's share was full (Limits); the
	// same request may be answered in a moment. Never with ok.
	Busy bool `json:"busy,omitempty"`
}

// Status is one service as `hsvc status --json` shows it (SPEC §4). The
// fields after Source are extensions, stable like the others.
type Status struct {
	Name      string    `json:"name"`
	State     string    `json:"state"` // SPEC §3: down starting up stopping backoff exited failed
	Want      string    `json:"want"`  // up or down
	PID       int       `json:"pid"`   // 0 when no process runs
	Since     time.Time `json:"since"` // when the service entered State
	Ready     bool      `json:"ready"`
	Restarts  int       `json:"restarts"`
	LastExit  *Exit     `json:"last_exit"` // null until the first exit
	Reason    string    `json:"reason"`    // why it is in State, mostly for down/failed/backoff
	Source    string    `json:"source"`    // static, scandir or template:<name>
	LogPath   string    `json:"log_path"`  // the "current" log file; "" when it logs to the console only
	LostLines uint64    `json:"lost_lines"`
	// NotApplied: a scandir service whose dir changed into something
	// that is not a service (a broken service.yaml, a refused file) runs
	// its last good definition; this says why the new one is not taken.
	NotApplied string `json:"not_applied,omitempty"`
	// UpSince is when the running process was spawned (zero when none
	// runs); Since is when it entered State, e.g. became ready.
	UpSince time.Time `json:"up_since,omitzero"`
}

// Exit is how a service's process ended.
type Exit struct {
	Code   int       `json:"code"`   // exit status, or 128+N when killed by signal N
	Signal string    `json:"signal"` // "KILL", "TERM"... when killed by a signal, else ""
	At     time.Time `json:"at"`
	// OOM: killed by a SIGKILL hinit did not send while the container's
	// cgroup counted an OOM kill (an extension; absent when false).
	OOM bool `json:"oom,omitempty"`
	// PidsLimit: any other failure while the container's pids limit
	// refused a new process or thread (an extension; absent when false).
	PidsLimit bool `json:"pids_limit,omitempty"`
}
