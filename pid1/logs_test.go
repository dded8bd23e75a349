package pid1

import (
	"path/filepath"
	"strings"
	"testing"

	"hinit/internal/testprog"
)

// Before its first start a service with log.dir already says where its log
// will be (log.dir expanded as its start would), so hsvc logs points there
// instead of saying that the output goes to the console.
func TestLogPathBeforeFirstStart(t *testing.T) {
	testprog.ExposeBinary(t)
	root := testprog.PublicDir(t)
	cfg := "services:\n  later:\n    command: " + prog("sleep", "60s") + "\n    enabled: \"no\"\n" +
		"    log: {dir: \"${LOG_ROOT}/later\"}\n"
	p := startInit(t, initOpts{config: cfg, args: []string{"sleep", "60"}, env: []string{"LOG_ROOT=" + root}})
	p.waitOutput("main started", true)
	code, _, errOut := p.hsvc(nil, "logs", "later")
	want := filepath.Join(root, "later", "current")
	if code != 1 || !strings.Contains(errOut, "no log at "+want+" yet") {
		t.Errorf("hsvc logs later before its first start: exit %d, %q; want 1 and the path %s", code, errOut, want)
	}
}
