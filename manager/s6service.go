package manager

import (
	"time"

	"hinit/config"
	"hinit/s6dir"
)

// s6Service is the service hinit runs for the s6 servicedir path read as
// d, as user (the trust rule's verdict: root, or the dir's owner). run
// starts in the dir; after each exit finish runs with s6's arguments, and
// its exit 125 keeps the service down; like s6-supervise, a run that
// lasted less than a second is restarted a second after it started, and
// never given up. Its output goes to the container's stdout as "[name]
// line", or, with log/run, its stdout to a logger service NAME/log through
// a pipe hinit holds (package supervise).
func s6Service(name, path string, d *s6dir.Dir, user string) *config.Service {
	def := &config.Service{
		Name: name, Source: "scandir", File: path + "/run",
		Command: []string{path + "/run"}, User: user, Workdir: path,
		Restart: config.RestartAlways,
		Backoff: config.Backoff{Initial: time.Second, Max: time.Second, ResetAfter: time.Second},
		Stop:    config.Stop{Signal: "TERM", Timeout: s6dir.DefaultKillTimeout},
		Ready:   config.Ready{NotifyFD: d.NotificationFD},
	}
	if d.DownSignal != "" {
		def.Stop.Signal = d.DownSignal
	}
	if d.TimeoutKill > 0 {
		def.Stop.Timeout = d.TimeoutKill
	}
	if d.Finish {
		def.Finish = &config.Finish{Command: []string{path + "/finish"}, Timeout: d.TimeoutFinish}
	}
	if d.Log {
		def.Logger = &config.Service{
			Name: name + "/log", Source: "scandir", File: path + "/log/run",
			Command: []string{path + "/log/run"}, User: user, Workdir: path + "/log",
			Restart: config.RestartAlways, Backoff: def.Backoff,
			Stop: config.Stop{Signal: "TERM", Timeout: s6LoggerKillTimeout},
		}
	}
	return def
}

// s6LoggerKillTimeout is the SIGKILL deadline of a dir's log/run, stopped
// once its service is gone.
const s6LoggerKillTimeout = 10 * time.Second
