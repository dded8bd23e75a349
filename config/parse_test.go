package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// parseCases are invalid hinit.yaml files and the exact problems each gives.
// FuzzParse seeds its corpus from them.
var parseCases = []struct {
	name string
	yaml string
	want []string
}{
	{
		name: "an exit code that both ends and restarts",
		yaml: "services:\n  web:\n    command: [web]\n    no_restart_exit_codes: [0, 75]\n    restart_now_exit_codes: [75]\n",
		want: []string{`hinit.yaml:5: services.web.restart_now_exit_codes: exit code 75 is in both no_restart_exit_codes and restart_now_exit_codes, expected one of them`},
	},
	{
		name: "unknown top-level key",
		yaml: "user: hermes\nservice: {}\n",
		want: []string{`hinit.yaml:2: service: unknown key (expected one of user, main, services, templates, boot, reconcile, services_max, shutdown_timeout, env, compat)`},
	},
	{
		name: "unknown service key",
		yaml: "services:\n  web:\n    command: [web]\n    restrat: always\n",
		want: []string{`hinit.yaml:4: services.web.restrat: unknown key (expected one of command, user, workdir, env, enabled, restart, no_restart_exit_codes, restart_now_exit_codes, backoff, give_up, stop, ready, log, essential, signals, protected)`},
	},
	{
		name: "unknown nested keys",
		yaml: `main: {wrapp: [hermes]}
services:
  web:
    command: [web]
    backoff: {initial: 1s, maximum: 2s}
    give_up: {restarts: 1, within: 1m, after: 2}
    stop: {signal: TERM, grace: 5s}
    ready: {http: ":80"}
    log: {dir: /l, rotate: 1}
boot:
  - {name: seed, command: [seed], retries: 2}
reconcile: {home: /h, template: gateway, dir: x}
templates:
  gateway:
    command: [gw]
    overrides:
      default: {commandd: [x]}
`,
		want: []string{
			`hinit.yaml:1: main.wrapp: unknown key (expected one of default, wrap, always_wrap, user, remap_exit, env, workdir)`,
			`hinit.yaml:5: services.web.backoff.maximum: unknown key (expected one of initial, max, reset_after)`,
			`hinit.yaml:6: services.web.give_up.after: unknown key (expected one of restarts, within)`,
			`hinit.yaml:7: services.web.stop.grace: unknown key (expected one of signal, timeout, planned_stop_marker)`,
			`hinit.yaml:8: services.web.ready.http: unknown key (expected one of notify_fd, tcp, delay)`,
			`hinit.yaml:9: services.web.log.rotate: unknown key (expected one of dir, max_size, keep, console)`,
			`hinit.yaml:11: boot[0].retries: unknown key (expected one of name, command, timeout, on_failure)`,
			`hinit.yaml:12: reconcile.dir: unknown key (expected one of home, template, check_grace)`,
			`hinit.yaml:17: templates.gateway.overrides.default.commandd: unknown key (expected one of command, user, workdir, env, enabled, restart, no_restart_exit_codes, restart_now_exit_codes, backoff, give_up, stop, ready, log, essential, signals)`,
		},
	},
	{
		name: "wrong types",
		yaml: `services:
  web:
    command: {run: web}
    essential: "yes"
    env: [A=1]
    log: {keep: ten, console: 1}
    no_restart_exit_codes: 78
boot: {name: x}
services_max: many
`,
		want: []string{
			`hinit.yaml:3: services.web.command: expected a list of arguments or a shell command string, got a mapping`,
			`hinit.yaml:4: services.web.essential: expected true or false, got "yes"`,
			`hinit.yaml:5: services.web.env: expected a mapping, got a list`,
			`hinit.yaml:6: services.web.log.keep: expected an integer, got "ten"`,
			`hinit.yaml:6: services.web.log.console: expected true or false, got "1"`,
			`hinit.yaml:7: services.web.no_restart_exit_codes: expected a list, got "78"`,
			`hinit.yaml:8: boot: expected a list, got a mapping`,
			`hinit.yaml:9: services_max: expected an integer, got "many"`,
		},
	},
	{
		name: "services is not a mapping",
		yaml: "services:\n  - web\n",
		want: []string{`hinit.yaml:2: services: expected a mapping, got a list`},
	},
	{
		name: "service is not a mapping",
		yaml: "services:\n  web: [web]\n",
		want: []string{`hinit.yaml:2: services.web: expected a mapping, got a list`},
	},
	{
		name: "bad durations",
		yaml: `shutdown_timeout: 8
services:
  web:
    command: [web]
    backoff: {initial: 0s, reset_after: -1s}
    stop: {timeout: five}
    give_up: {restarts: 3, within: 1d}
`,
		want: []string{
			`hinit.yaml:1: shutdown_timeout: "8" is not a duration (expected Go syntax, e.g. 500ms, 5m)`,
			`hinit.yaml:5: services.web.backoff.initial: "0s" is zero, expected a duration above 0 (e.g. 500ms, 5m)`,
			`hinit.yaml:5: services.web.backoff.reset_after: "-1s" is negative, expected a duration of 0 or more`,
			`hinit.yaml:6: services.web.stop.timeout: "five" is not a duration (expected Go syntax, e.g. 500ms, 5m)`,
			`hinit.yaml:7: services.web.give_up.within: "1d" is not a duration (expected Go syntax, e.g. 500ms, 5m)`,
		},
	},
	{
		name: "bad sizes",
		yaml: `services:
  a: {command: [a], log: {max_size: 1XB}}
  b: {command: [b], log: {max_size: 0}}
  c: {command: [c], log: {max_size: -5}}
  d: {command: [d], log: {max_size: 99999999999G}}
  e: {command: [e], log: {max_size: [1]}}
`,
		want: []string{
			`hinit.yaml:2: services.a.log.max_size: "1XB" is not a size (expected bytes or a number with B, K, KiB, KB, M, MiB, MB, G, GiB, GB)`,
			`hinit.yaml:3: services.b.log.max_size: "0" is zero, expected a size above 0`,
			`hinit.yaml:4: services.c.log.max_size: "-5" is not a size (expected bytes or a number with B, K, KiB, KB, M, MiB, MB, G, GiB, GB)`,
			`hinit.yaml:5: services.d.log.max_size: "99999999999G" is not a size (expected bytes or a number with B, K, KiB, KB, M, MiB, MB, G, GiB, GB)`,
			`hinit.yaml:6: services.e.log.max_size: expected a size (e.g. 1MiB, 512KiB, 1MB, 10K or bytes), got a list`,
		},
	},
	{
		name: "invalid service names",
		yaml: "services:\n  Web: {command: [w]}\n  -web: {command: [w]}\n  .hidden: {command: [w]}\n  a/b: {command: [w]}\n  " +
			strings.Repeat("a", 252) + ": {command: [w]}\n",
		want: []string{
			`hinit.yaml:2: services.Web: "Web" is not a valid service name (expected ^[a-z0-9][a-z0-9_.-]*$, at most 251 bytes)`,
			`hinit.yaml:3: services.-web: "-web" is not a valid service name (expected ^[a-z0-9][a-z0-9_.-]*$, at most 251 bytes)`,
			`hinit.yaml:4: services..hidden: ".hidden" is not a valid service name (expected ^[a-z0-9][a-z0-9_.-]*$, at most 251 bytes)`,
			`hinit.yaml:5: services.a/b: "a/b" is not a valid service name (expected ^[a-z0-9][a-z0-9_.-]*$, at most 251 bytes)`,
			`hinit.yaml:6: services."` + strings.Repeat("a", 64) + `...": "` + strings.Repeat("a", 64) + `..." is not a valid service name (expected ^[a-z0-9][a-z0-9_.-]*$, at most 251 bytes)`,
		},
	},
	{
		name: "duplicate service names",
		yaml: "services:\n  web: {command: [a]}\n  api: {command: [b]}\n  web: {command: [c]}\n",
		want: []string{`hinit.yaml:4: services.web: defined twice (first at line 2)`},
	},
	{
		name: "duplicate key in a service",
		yaml: "services:\n  web:\n    command: [a]\n    restart: never\n    restart: always\n",
		want: []string{`hinit.yaml:5: services.web.restart: defined twice (first at line 4)`},
	},
	{
		name: "unknown restart policy",
		yaml: "services:\n  web:\n    command: [web]\n    restart: sometimes\n",
		want: []string{`hinit.yaml:4: services.web.restart: "sometimes" is not a restart policy (always, on-failure, never)`},
	},
	{
		name: "unknown signal",
		yaml: "services:\n  web:\n    command: [web]\n    stop: {signal: SIGFOO}\n  api:\n    command: [api]\n    stop: {signal: 99}\n",
		want: []string{
			`hinit.yaml:4: services.web.stop.signal: "SIGFOO" is not a signal (expected e.g. TERM, SIGTERM, INT, HUP or a number)`,
			`hinit.yaml:7: services.api.stop.signal: "99" is not a signal (expected e.g. TERM, SIGTERM, INT, HUP or a number)`,
		},
	},
	{
		name: "exit codes out of range",
		yaml: `main:
  remap_exit: {143: 0, 300: 1, 1: -1}
services:
  web:
    command: [web]
    no_restart_exit_codes: [0, 78, 256, abc]
`,
		want: []string{
			`hinit.yaml:2: main.remap_exit: "300" is not an exit code (expected 0..255)`,
			`hinit.yaml:2: main.remap_exit.1: "-1" is not an exit code (expected 0..255)`,
			`hinit.yaml:6: services.web.no_restart_exit_codes[2]: "256" is not an exit code (expected 0..255)`,
			`hinit.yaml:6: services.web.no_restart_exit_codes[3]: "abc" is not an exit code (expected 0..255)`,
		},
	},
	{
		name: "protected outside a static service",
		yaml: `templates:
  gateway:
    command: [gw]
    protected: true
    overrides:
      default:
        protected: true
`,
		want: []string{
			`hinit.yaml:4: templates.gateway.protected: only static services (services: in hinit.yaml) may be protected`,
			`hinit.yaml:7: templates.gateway.overrides.default.protected: only static services (services: in hinit.yaml) may be protected`,
		},
	},
	{
		name: "missing or empty command",
		yaml: "services:\n  a: {restart: never}\n  b: {command: []}\n  c: {command: \"\"}\n  d:\ntemplates:\n  t: {user: hermes}\n",
		want: []string{
			`hinit.yaml:2: services.a: command is required (a list of arguments or a shell command string)`,
			`hinit.yaml:3: services.b.command: is empty, expected a list of arguments or a shell command string`,
			`hinit.yaml:4: services.c.command: is empty, expected a list of arguments or a shell command string`,
			`hinit.yaml:5: services.d: command is required (a list of arguments or a shell command string)`,
			`hinit.yaml:7: templates.t: command is required (a list of arguments or a shell command string)`,
		},
	},
	{
		name: "reconcile names an unknown template",
		yaml: "templates:\n  gateway: {command: [gw]}\nreconcile:\n  home: /opt/data\n  template: gw\n",
		want: []string{`hinit.yaml:5: reconcile.template: "gw" is not one of the templates (gateway)`},
	},
	{
		name: "reconcile misses keys",
		yaml: "reconcile: {}\n",
		want: []string{
			`hinit.yaml:1: reconcile: home is required (the HERMES_HOME to reconcile, e.g. "${HERMES_HOME:-/opt/data}")`,
			`hinit.yaml:1: reconcile: template is required (the template of the gateways, e.g. gateway)`,
		},
	},
	{
		name: "bad boot hooks",
		yaml: `boot:
  - name: setup
    command: [setup]
    on_failure: ignore
  - command: [x]
  - name: setup
    command: "true"
    timeout: 0s
  - name: empty
  -
`,
		want: []string{
			`hinit.yaml:4: boot[0].on_failure: "ignore" is not an on_failure action (stop, continue)`,
			`hinit.yaml:5: boot[1]: name is required (it names the hook in log lines)`,
			`hinit.yaml:6: boot[2]: hook name "setup" is used twice (first at line 2)`,
			`hinit.yaml:8: boot[2].timeout: "0s" is zero, expected a duration above 0 (e.g. 500ms, 5m)`,
			`hinit.yaml:9: boot[3]: command is required (a list of arguments or a shell command string)`,
			`hinit.yaml:10: boot[4]: expected a mapping of name, command, timeout, on_failure, got null`,
		},
	},
	{
		name: "log.keep past MaxLogKeep",
		yaml: "services:\n  a: {command: [a], log: {keep: 1001}}\n  b: {command: [b], log: {keep: 1000}}\n",
		want: []string{`hinit.yaml:2: services.a.log.keep: 1001 is too large, expected at most 1000 (raise max_size to keep more)`},
	},
	{
		// Each restart within the window is remembered: a scandir
		// service's owner could make PID 1 keep any number of them.
		name: "give_up.restarts past MaxGiveUpRestarts",
		yaml: "services:\n  a: {command: [a], give_up: {restarts: 1001, within: 1h}}\n  b: {command: [b], give_up: {restarts: 1000, within: 1h}}\n",
		want: []string{`hinit.yaml:2: services.a.give_up.restarts: 1001 is too large, expected at most 1000 (shorten within to give up later)`},
	},
	{
		name: "bad ready",
		yaml: `services:
  a: {command: [a], ready: {notify_fd: 1}}
  b: {command: [b], ready: {tcp: "localhost"}}
  c: {command: [c], ready: {tcp: "127.0.0.1:9119", delay: 2s}}
  d: {command: [d], ready: {tcp: "127.0.0.1:${PORT}"}}
  e: {command: [e], ready: {notify_fd: 1024}}
  f: {command: [f], ready: {notify_fd: 1023}}
`,
		want: []string{
			`hinit.yaml:2: services.a.ready.notify_fd: 1 is too small, expected 3 or more`,
			`hinit.yaml:3: services.b.ready.tcp: "localhost" is not an address, expected host:port (e.g. 127.0.0.1:9119)`,
			`hinit.yaml:4: services.c.ready: set only one of notify_fd, tcp, delay`,
			`hinit.yaml:6: services.e.ready.notify_fd: 1024 is too large, expected at most 1023`,
		},
	},
	{
		name: "backoff max below initial",
		yaml: "services:\n  web:\n    command: [web]\n    backoff: {initial: 2m}\n",
		want: []string{`hinit.yaml:4: services.web.backoff: max 1m0s is less than initial 2m0s, expected max >= initial (max is 1m0s unless set)`},
	},
	{
		name: "give_up without within",
		yaml: "services:\n  web:\n    command: [web]\n    give_up: {restarts: 10}\n",
		want: []string{`hinit.yaml:4: services.web.give_up: within is required with restarts (e.g. {restarts: 10, within: 5m})`},
	},
	{
		name: "bad users",
		yaml: "user: \"hermes user\"\nmain: {user: \"1000:\"}\nservices:\n  web: {command: [w], user: \"-1\"}\n",
		want: []string{
			`hinit.yaml:1: user: "hermes user" is not a user (expected a name, uid or uid:gid)`,
			`hinit.yaml:2: main.user: "1000:" is not a user (expected a name, uid or uid:gid)`,
			`hinit.yaml:4: services.web.user: "-1" is not a user (expected a name, uid or uid:gid)`,
		},
	},
	{
		name: "bad env",
		yaml: "env: {\"A=B\": x, OK: [1]}\nservices:\n  web: {command: [w], env: {\"\": x}}\n",
		want: []string{
			`hinit.yaml:1: env: "A=B" is not a valid environment variable name (expected not empty, no "=", no NUL)`,
			`hinit.yaml:1: env.OK: expected a string, got a list`,
			`hinit.yaml:3: services.web.env: "" is not a valid environment variable name (expected not empty, no "=", no NUL)`,
		},
	},
	{
		name: "relative paths",
		yaml: `main: {workdir: data}
services:
  web: {command: [w], workdir: srv, log: {dir: logs}, stop: {planned_stop_marker: m.json}}
  ok: {command: [w], workdir: "${HOME}", log: {dir: "/var/log/ok"}}
reconcile: {home: opt, template: t}
templates: {t: {command: [t], workdir: "{instance}"}}
`,
		want: []string{
			`hinit.yaml:1: main.workdir: "data" is not an absolute path (expected /... or ${VAR}/...)`,
			`hinit.yaml:3: services.web.workdir: "srv" is not an absolute path (expected /... or ${VAR}/...)`,
			`hinit.yaml:3: services.web.log.dir: "logs" is not an absolute path (expected /... or ${VAR}/...)`,
			`hinit.yaml:3: services.web.stop.planned_stop_marker: "m.json" is not an absolute path (expected /... or ${VAR}/...)`,
			`hinit.yaml:5: reconcile.home: "opt" is not an absolute path (expected /... or ${VAR}/...)`,
		},
	},
	{
		name: "paths past PATH_MAX or with a control character",
		yaml: "services:\n  web: {command: [w], log: {dir: \"/" + strings.Repeat("<", 4095) + "\"}}\n  tab: {command: [w], workdir: \"/a\\tb\"}\n  ok: {command: [w], workdir: \"/" + strings.Repeat("d", 4094) + "\"}\n",
		want: []string{
			`hinit.yaml:2: services.web.log.dir: a path of 4096 bytes: at most 4095`,
			`hinit.yaml:3: services.tab.workdir: "/a\tb" holds a control character`,
		},
	},
	{
		// the value was taken as written: !!binary aGVsbG8= ran aGVsbG8=
		name: "tags that ask for another reading",
		yaml: "services:\n  web: {command: !!binary aGVsbG8=, env: {A: !custom x, B: !!str 0100, C: !!int 3}}\n  t: {command: [w], env: {D: !!timestamp 2001-12-14}}\n",
		want: []string{
			`hinit.yaml:2: the tag "!!binary" is not supported: write the value itself`,
			`hinit.yaml:2: the tag "!custom" is not supported: write the value itself`,
			`hinit.yaml:3: the tag "!!timestamp" is not supported: write the value itself`,
		},
	},
	{
		name: "NUL in a string",
		yaml: "services:\n  web: {command: [\"a\\0b\"]}\n",
		want: []string{`hinit.yaml:2: services.web.command[0]: contains a NUL byte, which no program argument or variable can hold`},
	},
	{
		name: "bad template and instance names",
		yaml: `templates:
  Gateway: {command: [gw]}
  gateway:
    command: [gw]
    overrides:
      my.profile: {user: root}
`,
		want: []string{
			`hinit.yaml:2: templates.Gateway: "Gateway" is not a valid template name (expected ^[a-z0-9][a-z0-9_.-]*$, at most 251 bytes)`,
			`hinit.yaml:6: templates.gateway.overrides.my.profile: "my.profile" is not a valid instance name (expected ^[a-z0-9][a-z0-9_-]*$ (no dot), at most 64 bytes)`,
		},
	},
	{
		name: "services_max below 1",
		yaml: "services_max: 0\n",
		want: []string{`hinit.yaml:1: services_max: 0 is too small, expected 1 or more`},
	},
	{
		name: "integers are decimal",
		yaml: "services_max: 0x40\nservices:\n  a:\n    command: [a]\n    log: {keep: 0o10}\n",
		want: []string{
			`hinit.yaml:1: services_max: "0x40" is not a decimal integer`,
			`hinit.yaml:5: services.a.log.keep: "0o10" is not a decimal integer`,
		},
	},
	{
		name: "merge key in a service",
		yaml: "templates:\n  t: &base {command: [a]}\nservices:\n  web:\n    <<: *base\n",
		// One line: "command is required" after it said the same twice.
		want: []string{`hinit.yaml:5: services.web."<<": merge keys are not supported, write the keys out`},
	},
	{
		name: "merge key in a boot hook",
		yaml: "x: &h {command: [a]}\nboot:\n  - name: h\n    <<: *h\n",
		want: []string{
			`hinit.yaml:1: x: unknown key (expected one of user, main, services, templates, boot, reconcile, services_max, shutdown_timeout, env, compat)`,
			`hinit.yaml:4: boot[0]."<<": merge keys are not supported, write the keys out`,
		},
	},
	{
		// yaml.v3 says "found character that cannot start any token".
		name: "tab indentation",
		yaml: "services:\n  web:\n    command: [a]\n \trestart: always\n",
		want: []string{`hinit.yaml:4: invalid YAML: a tab indents this line; YAML indents with spaces`},
	},
	{
		name: "YAML parser error",
		yaml: "services:\n  web:\n    command: [a, b\n",
		want: []string{`hinit.yaml:3: invalid YAML: did not find expected ',' or ']'`},
	},
	{
		// yaml.v3 names the line where the block starts (2); the problem
		// is the key indented by three on line 5.
		name: "YAML parser error in a block",
		yaml: "services:\n  web:\n    command: [a]\n    user: hermes\n   workdir: /x\n    env: {}\n",
		want: []string{`hinit.yaml:5: invalid YAML: did not find expected key (in the block that starts at line 2)`},
	},
	{
		name: "YAML parser error in a list",
		yaml: "services:\n  web:\n    command:\n      - a\n      user: hermes\n",
		want: []string{`hinit.yaml:5: invalid YAML: did not find expected '-' indicator (in the block that starts at line 4)`},
	},
	{
		// yaml.v3's reader names no line for these (it said line 1).
		name: "control character",
		yaml: "services:\n  web:\n    command: [a]\n    env:\n      A: b\n      B: \"\x1b[31m\"\n",
		want: []string{`hinit.yaml:6: invalid YAML: control characters are not allowed`},
	},
	{
		name: "not UTF-8",
		yaml: "services:\n  web:\n    command: [a, \xff]\n",
		want: []string{`hinit.yaml:3: invalid YAML: invalid leading UTF-8 octet`},
	},
	{
		name: "unknown alias",
		yaml: "services:\n  web:\n    command: *cmd\n",
		want: []string{`hinit.yaml:3: invalid YAML: unknown anchor 'cmd' referenced`},
	},
	{
		name: "YAML scanner error",
		yaml: "services:\n  web:\n    command: @a\n",
		want: []string{`hinit.yaml:3: invalid YAML: found character that cannot start any token`},
	},
	{
		name: "tab indentation first",
		yaml: "services:\n  web:\n\t command: [a]\n",
		want: []string{`hinit.yaml:3: invalid YAML: a tab indents this line; YAML indents with spaces`},
	},
	{
		name: "a list where a word is expected: one line each",
		yaml: `services:
  web:
    command: [web]
    restart: [always]
    stop: {signal: [TERM]}
    signals: {a: b}
    ready: {tcp: [":80"]}
boot:
  - {name: a, command: [a], on_failure: [stop]}
compat: [s6-overlay]
`,
		want: []string{
			`hinit.yaml:4: services.web.restart: expected a string, got a list`,
			`hinit.yaml:5: services.web.stop.signal: expected a string, got a list`,
			`hinit.yaml:6: services.web.signals: expected a string, got a mapping`,
			`hinit.yaml:7: services.web.ready.tcp: expected a string, got a list`,
			`hinit.yaml:9: boot[0].on_failure: expected a string, got a list`,
			`hinit.yaml:10: compat: expected a string, got a list`,
		},
	},
	{
		name: "an empty program name",
		yaml: "services:\n  web:\n    command: [\"\", x]\nmain:\n  default: [~]\nboot:\n  - {name: a, command: ['']}\n",
		want: []string{
			`hinit.yaml:3: services.web.command[0]: is empty, expected the program to run`,
			`hinit.yaml:5: main.default[0]: is empty, expected the program to run`,
			`hinit.yaml:7: boot[0].command[0]: is empty, expected the program to run`,
		},
	},
	{
		name: "two documents",
		yaml: "user: hermes\n---\nuser: root\n",
		want: []string{`hinit.yaml:2: a second YAML document is not allowed, expected one document`},
	},
	{
		name: "top level is a list",
		yaml: "- user: hermes\n",
		want: []string{`hinit.yaml:1: expected a mapping of user, main, services, templates, boot, reconcile, services_max, shutdown_timeout, env, compat at the top level, got a list`},
	},
	{
		name: "several problems, in line order",
		yaml: `templates:
  gateway: {command: [gw], restart: maybe}
services:
  web:
    command: [web]
    stop: {signal: NOPE}
reconcile: {home: /h, template: nope}
main: {bogus: 1}
`,
		want: []string{
			`hinit.yaml:2: templates.gateway.restart: "maybe" is not a restart policy (always, on-failure, never)`,
			`hinit.yaml:6: services.web.stop.signal: "NOPE" is not a signal (expected e.g. TERM, SIGTERM, INT, HUP or a number)`,
			`hinit.yaml:7: reconcile.template: "nope" is not one of the templates (gateway)`,
			`hinit.yaml:8: main.bogus: unknown key (expected one of default, wrap, always_wrap, user, remap_exit, env, workdir)`,
		},
	},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("hinit.yaml", []byte(tc.yaml))
			if c != nil {
				t.Errorf("Parse returned a config with error %v", err)
			}
			checkProblems(t, err, tc.want)
		})
	}
}

// checkProblems compares the lines of err, an *Error, with want.
func checkProblems(t *testing.T, err error, want []string) {
	t.Helper()
	var perr *Error
	if !errors.As(err, &perr) {
		t.Fatalf("error = %v (%T), want *Error", err, err)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("errors.Is(err, ErrInvalid) = false")
	}
	if got := perr.Lines(); !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Errorf("Error() = %q, want the lines joined", got)
	}
}

func TestParseDefaults(t *testing.T) {
	c, err := Parse("hinit.yaml", []byte("services:\n  web:\n    command: \"exec web --port 80\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Service{
		Name: "web", Source: "static", File: "hinit.yaml", Line: 2,
		Command: []string{"/bin/sh", "-c", "exec web --port 80"},
		Restart: RestartAlways,
		Backoff: Backoff{Initial: 500 * time.Millisecond, Max: 60 * time.Second, ResetAfter: 10 * time.Second},
		Stop:    Stop{Signal: "TERM", Timeout: 10 * time.Second},
		Log:     Log{MaxSize: 1 << 20, Keep: 10},
	}
	if len(c.Services) != 1 || !reflect.DeepEqual(c.Services[0], want) {
		t.Errorf("service = %+v\nwant %+v", c.Services[0], want)
	}
	if c.ServicesMax != 1000 || c.ShutdownTimeout != 0 || c.Reconcile != nil || c.File != "hinit.yaml" {
		t.Errorf("config = %+v", c)
	}
	if !c.Services[0].Log.ConsoleOn() {
		t.Error("console is off by default, want on")
	}
}

func TestParseEmpty(t *testing.T) {
	for name, data := range map[string]string{"empty": "", "comments": "# nothing yet\n", "null document": "---\n"} {
		t.Run(name, func(t *testing.T) {
			c, err := Parse("hinit.yaml", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			d := Default()
			d.File = "hinit.yaml"
			if !reflect.DeepEqual(c, d) {
				t.Errorf("config = %+v, want defaults %+v", c, d)
			}
		})
	}
}

func TestParseValues(t *testing.T) {
	c, err := Parse("hinit.yaml", []byte(`services_max: 50
shutdown_timeout: 30s
services:
  a:
    command: [a, 1, true]
    stop: {signal: SIGINT}
    log: {max_size: 512KiB}
  b:
    command: [b]
    stop: {signal: hup}
    log: {max_size: 1MB}
  c:
    command: [c]
    stop: {signal: TERM}
    log: {max_size: 10K}
  d:
    command: [d]
    log: {max_size: 4096, keep: 0, console: false}
    protected: true
    essential: true
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.ServicesMax != 50 || c.ShutdownTimeout != 30*time.Second {
		t.Errorf("services_max %d, shutdown_timeout %v", c.ServicesMax, c.ShutdownTimeout)
	}
	tests := []struct {
		name    string
		signal  string
		maxSize int64
	}{
		{"a", "INT", 512 << 10},
		{"b", "HUP", 1000000},
		{"c", "TERM", 10 << 10},
		{"d", "TERM", 4096},
	}
	for i, tt := range tests {
		s := c.Services[i]
		if s.Name != tt.name || s.Stop.Signal != tt.signal || s.Log.MaxSize != tt.maxSize {
			t.Errorf("service %d = %s, signal %s, max_size %d; want %+v", i, s.Name, s.Stop.Signal, s.Log.MaxSize, tt)
		}
	}
	if got := c.Services[0].Command; !reflect.DeepEqual(got, []string{"a", "1", "true"}) {
		t.Errorf("command = %q, scalars should be taken as written", got)
	}
	d := c.Services[3]
	if !d.Protected || !d.Essential || d.Log.ConsoleOn() || d.Log.Keep != 0 {
		t.Errorf("d = %+v", d)
	}
	// Decimal, as exit codes are (YAML read 0100 as octal 64); an
	// enabled set but empty is false, as documented (it started the
	// service).
	c, err = Parse("hinit.yaml", []byte("services_max: 0_100\nservices:\n"+
		"  a: {command: [a], enabled: \"\", log: {keep: 010}}\n  b: {command: [b], enabled: }\n"+
		"  c: {command: [c], enabled: ~}\n  d: {command: [d]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.ServicesMax != 100 || c.Services[0].Log.Keep != 10 {
		t.Errorf("services_max %d, keep %d; want 100 and 10", c.ServicesMax, c.Services[0].Log.Keep)
	}
	for i, want := range []bool{false, false, false, true} {
		if s := c.Services[i]; s.Expanded(nil).IsEnabled() != want {
			t.Errorf("service %s (enabled %q): IsEnabled %v, want %v", s.Name, s.Enabled, !want, want)
		}
	}
}

func TestParseAliases(t *testing.T) {
	c, err := Parse("hinit.yaml", []byte(`env: &env {HERMES_HOME: /opt/data}
services:
  a:
    command: &cmd [hermes, dashboard]
    env: *env
    stop: &stop {signal: INT, timeout: 3s}
  b:
    command: *cmd
    stop: *stop
`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.Services[0], c.Services[1]
	if !reflect.DeepEqual(a.Command, b.Command) || a.Stop != b.Stop || b.Stop.Signal != "INT" || a.Env["HERMES_HOME"] != "/opt/data" {
		t.Errorf("aliases not resolved: a %+v, b %+v", a, b)
	}
	a.Command[0] = "changed"
	if b.Command[0] != "hermes" {
		t.Error("services decoded from one anchor share memory")
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want fs.ErrNotExist", err)
	}
	path := filepath.Join(dir, "hinit.yaml")
	if err := os.WriteFile(path, []byte("user: hermes\nservices:\n  web: {command: [w], restart: sometimes}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	checkProblems(t, err, []string{path + `:3: services.web.restart: "sometimes" is not a restart policy (always, on-failure, never)`})
	if err := os.WriteFile(path, []byte("user: hermes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil || c.User != "hermes" || c.File != path {
		t.Errorf("Load = %+v, %v", c, err)
	}
}

// TestErrorIsCapped (issue 14, trial 4): 64 KiB of unknown keys used to
// make a 1.9 MB error, kept and sent in every status. The error keeps the
// first problems by line, counts the rest, and its text stays near 1 KiB.
func TestErrorIsCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("command: [x]\n")
	keys := 0
	for b.Len() < 64<<10-16 {
		fmt.Fprintf(&b, "k%d: 1\n", keys)
		keys++
	}
	_, _, err := ParseService("service.yaml", []byte(b.String()), "junk")
	var perr *Error
	if !errors.As(err, &perr) {
		t.Fatalf("ParseService: %v, want an *Error", err)
	}
	if len(perr.Problems) != MaxProblems || perr.More != keys-MaxProblems {
		t.Fatalf("kept %d problems and %d more, want %d and %d", len(perr.Problems), perr.More, MaxProblems, keys-MaxProblems)
	}
	lines := perr.Lines()
	if !strings.HasPrefix(lines[0], "service.yaml:2: k0: unknown key") {
		t.Errorf("first line %q, want the first unknown key", lines[0])
	}
	if want := fmt.Sprintf("and %d more problems", keys-len(lines)+1); lines[len(lines)-1] != want {
		t.Errorf("last line %q, want %q", lines[len(lines)-1], want)
	}
	if n := len(err.Error()); n > 1100 {
		t.Errorf("error text is %d bytes, want about 1 KiB", n)
	}
}

// TestProblemsKeepLowestLines: problems found out of line order still
// leave the first ones of the file in the error.
func TestProblemsKeepLowestLines(t *testing.T) {
	p := problems{file: "f"}
	for line := MaxProblems + 10; line >= 1; line-- {
		p.add(line, "at %d", line)
	}
	p.add(1, "again at 1")
	perr := p.err().(*Error)
	if perr.More != 11 || perr.Problems[0].Msg != "at 1" || perr.Problems[1].Msg != "again at 1" ||
		perr.Problems[MaxProblems-1].Line != MaxProblems-1 {
		t.Fatalf("kept %+v, %d more", perr.Problems, perr.More)
	}
}
