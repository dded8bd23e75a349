package manager_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"hinit/control"
	"hinit/internal/testprog"
	"hinit/manager"
	mt "hinit/manager/managertest"
)

// A register answered before the watcher read its dir holds a slot until
// it is read: the registers a user leaves waiting (each a goroutine of
// PID 1's, for as long as hinit runs when the watcher never reports the
// dir) stay within services_max. Here the watcher reports nothing: its
// refused list is full (refusedMax), so the dir is refused unlisted.
func TestRegisterWaitingHoldsASlot(t *testing.T) {
	defer manager.ShortenRegisterWait(300 * time.Millisecond)()
	f := mt.Start(t, "services_max: 1\ntemplates:\n  gateway:\n    command: "+prog("sleep", "inf")+"\n    "+testEnv, nil)
	f.Publish("broken", "command: [x]\nrestart: sometimes\n")
	testprog.WaitFor(t, 5*time.Second, "broken noted", func() bool { return f.Status("broken") != nil })
	for i := range 16 {
		f.Publish(fmt.Sprintf("junk%02d", i), "command: [x]\n")
	}
	testprog.WaitFor(t, 5*time.Second, "junk refused", func() bool { return f.Status("junk15") != nil })
	f.Expect(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: "b00"}, control.CodeTimeout, "its dir is published")
	for i := 1; i < 4; i++ {
		resp := f.Do(control.Request{Verb: control.VerbRegister, Template: "gateway", Instance: fmt.Sprintf("b%02d", i)})
		if resp.Code != control.CodeFailed || !strings.Contains(resp.Error, "services_max") {
			t.Errorf("register b%02d with gateway-b00 still waiting: %d %q, want %d: services_max", i, resp.Code, resp.Error, control.CodeFailed)
		}
	}
}
