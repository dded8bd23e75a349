// Package supervise keeps services running by their restart policy.
//
// Each service is owned by one goroutine (Service.loop) that selects on its
// commands, its process's exit, its readiness signal and one timer; nothing
// else touches a service's state. Others read a snapshot (Status) and wait
// for changes through a channel that is closed at every change.
//
// States, and what moves a service between them:
//
//	         start                    ready (notify_fd, tcp, delay)
//	down ──────────────► starting ───────────────────────────► up
//	 ▲                     │  │                                 │
//	 │   exit, want down   │  └──────────── exit ◄──────────────┤
//	 └──── stopping ◄──────┴─── stop ◄──────────────────────────┘
//	         │ timeout: SIGKILL to the process group
//	         ▼
//	exit ─► restart policy:
//	         no_restart_exit_codes, restart: never,
//	         on-failure with exit 0            ──► exited
//	         give_up reached                   ──► failed (reason kept)
//	         ran >= backoff.reset_after        ──► starting, at once
//	         otherwise                         ──► backoff ──(timer)──► starting
//
// A start request resets the failure count, so "failed" and "exited"
// services come back when someone asks. Processes run in their own session
// (so they never get the terminal) with stdin on /dev/null and stdout and
// stderr on the service's log pipe. When a service's process ends, whatever
// it left in its process group is killed, so a restarted gateway never finds
// its old child still holding a port.
package supervise
