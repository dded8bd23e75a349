package manager

import (
	"testing"
	"time"

	"hinit/config"
	"hinit/s6dir"
)

func TestS6Service(t *testing.T) {
	const dir = "/run/service/gateway-coder"
	d := &s6dir.Dir{Finish: true, NotificationFD: 3, TimeoutKill: 2500 * time.Millisecond, DownSignal: "HUP", Log: true}
	def := s6Service("gateway-coder", dir, d, "10000:10000")
	if def.Command[0] != dir+"/run" || def.Workdir != dir || def.User != "10000:10000" || def.Ready.NotifyFD != 3 ||
		def.Stop != (config.Stop{Signal: "HUP", Timeout: 2500 * time.Millisecond}) || def.Restart != config.RestartAlways ||
		def.Backoff != (config.Backoff{Initial: time.Second, Max: time.Second, ResetAfter: time.Second}) {
		t.Errorf("defined %+v", def)
	}
	if def.Finish == nil || def.Finish.Command[0] != dir+"/finish" {
		t.Errorf("finish %+v, want %s/finish", def.Finish, dir)
	}
	if l := def.Logger; l == nil || l.Name != "gateway-coder/log" || l.User != "10000:10000" || l.Command[0] != dir+"/log/run" ||
		l.Workdir != dir+"/log" || l.Stop.Timeout != s6LoggerKillTimeout {
		t.Errorf("logger %+v", l)
	}
	// Nothing but run: TERM, s6dir.DefaultKillTimeout, no finish, no logger.
	def = s6Service("plain", "/run/service/plain", &s6dir.Dir{}, "0")
	if def.Stop != (config.Stop{Signal: "TERM", Timeout: s6dir.DefaultKillTimeout}) || def.Finish != nil || def.Logger != nil ||
		def.Ready.NotifyFD != 0 {
		t.Errorf("plain dir defined %+v", def)
	}
}
