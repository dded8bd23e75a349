package bench

// scenarioDoc says, in the Markdown report, what a scenario measures and
// what its figures include.
type scenarioDoc struct {
	id, title, what string
}

var scenarioDocs = []scenarioDoc{
	{"boot", "Boot to main exec",
		"From the instant before the init's execve (stamped by the namespace's first process) to the stamp of the probe the init runs as its main program. Includes the init's own exec and start (for hinit: a 4 MB static Go binary, the Go runtime, creating its runtime dir, control socket and scandir watch), then fork+exec+Go start of the probe. The floor is the same probe forked and exec'd with no init in between."},
	{"bare", "The bare mode beside tini",
		"hinit with no hinit.yaml and no HINIT_* variables (the bare mode of docs/tini.md: no runtime dir, environment dir, control socket or scandir watch) and tini, each as PID 1 of a fresh PID namespace with nothing but a main. Start → exit: from the instant before the init's execve (t0) until the harness has waited for PID 1, with /bin/true as main. SIGTERM: from kill(2) to PID 1 waited for, with a sleeping probe as main that dies of the forwarded TERM. The floor is the probe as a minimal Go init, measured alike: it catches the signals hinit catches, forks main, forwards, reaps and exits with main's status; what any Go PID 1 that catches signals pays before it does anything of its own (docs/decisions.md: the bare mode's start → exit). The second floor, start → exit only, is the probe as a Go PID 1 that catches no signal at all (fork, exec, a blocking wait4; not an init, since a TERM would end it and reach nobody): the Go runtime's own share. Each round runs the systems in a new random order."},
	{"memory", "Memory of the supervision tree (PSS), services excluded",
		"Sum of Pss from /proc/PID/smaps_rollup, once all N services run and the tree has settled: hinit alone (its main program and services excluded); s6-svscan plus every s6-supervise; the supervisord Python process. MB = 10^6 bytes."},
	{"threads", "Threads of the init",
		"Threads of the PID 1 process at the memory measurement: one OS thread per child would show here."},
	{"coldstart", "Cold start to all N services running",
		"From t0 (before the init's execve) to the last of the N probes' stamps. hinit: N static services in hinit.yaml; s6: a scandir with N service dirs (run is a symlink to the probe; s6-svscan -c 2N above 400 services, since 2.11 refuses more than 500 by default); supervisord: N [program:] sections. The floor: the probe itself as PID 1 forks and execs the N probes one after the other and does nothing else; every init pays that, and on 2 cores the N probes' own Go start competes with the init for the CPU."},
	{"restart", "SIGKILL of a service that had run > 10 s → new instance running",
		"From the harness's kill(2) to the new probe's stamp; each killed service had been up for more than 10.5 s (hinit's default backoff.reset_after is 10 s; s6 and supervisord have their own 1 s rules). Defaults everywhere."},
	{"crashloop", "Crash loop: delays between starts",
		"A service that exits 1 at once, watched over the idle window: the delay between consecutive starts, from probe stamp to probe stamp. hinit: backoff {initial: 500ms, max: 4s}; s6 and supervisord: defaults (supervisord gives up after startretries=3 → FATAL)."},
	{"rename", "Atomic rename into the scandir → service running",
		"From rename(2) of a complete service dir (built under a dot-name) to the probe's stamp. hinit: nothing else; s6: the time includes running s6-svscanctl -a, without which it never starts (second row); supervisord has no scandir: a [program:] file is renamed into its include dir and supervisorctl update is run, included."},
	{"control", "Control round trip",
		"Wall time of one status command of one service, from the harness's fork to its exit, client start included. The floor is the probe doing nothing: fork+exec+wait of a static Go program."},
	{"shutdown", "Shutdown with N cooperative services",
		"From SIGTERM to PID 1 until the harness (its parent) has waited for it. Services die of SIGTERM at once. hinit also has its main program (a sleeping probe) to stop. The floors: a Go program as PID 1 that exits at SIGTERM, once as it is and once holding one inotify watch, as anything watching a scandir with inotify (no polling) must: the kernel tears an inotify instance down at close (at the latest at exit) after an SRCU grace period, which takes from well under 1 ms to over 20 ms depending on what the rest of the machine is doing."},
	{"shutdown-stuck", "Shutdown with one service ignoring TERM",
		"Three services, one of which ignores SIGTERM and has a kill timeout T (hinit stop.timeout, s6 timeout-kill, supervisord stopwaitsecs). \"beyond T\" is the total minus T. tini, dumb-init and catatonit are not listed: with a main that ignores TERM they wait forever."},
	{"orphans", "Orphans reparented → all reaped",
		"A probe's child starts N sleepers, kills them, waits until all are zombies and exits; the kernel reparents the N zombies to PID 1. From the probe's wait for that child returning (reparenting is done by then) to no pid of theirs existing, polled with kill(pid, 0). The floor: the probe reaping N zombie children of its own with wait4. The kernel's cost of the parent's exit and the reparenting is reported apart."},
	{"idle", "Idle wake-ups",
		"Voluntary plus involuntary context switches of all threads of PID 1 (/proc/PID/task/*/status) over the window, with 100 sleeping services (tini, dumb-init, catatonit: a main that started 100 sleeping probes of its own). For s6 the whole tree is shown too."},
	{"size", "Binary size",
		"Files as installed (hinit: make build, -s -w), MB = 10^6 bytes; static or dynamic per file(1)."},
}
