package control

import (
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// warnEvery is how often one kind of warning a client can cause (a refusal,
// a bad request) reaches hinit's log: a client in a loop must not fill the
// log (issue 14: 112 MB of refusals in 25 s).
const warnEvery = 10 * time.Second

// maxQuietKeys bounds the kinds tracked apart; beyond it, the uids of a
// message share one key.
const maxQuietKeys = 256

// quietLog writes each kind of warning (message and uid) at most once per
// interval. The ones held back are counted and summed up in one line when
// the interval ends. Each kind known has one timer armed, which sums up or
// forgets the kind: nothing ticks once the clients are quiet.
type quietLog struct {
	log   *slog.Logger
	every time.Duration
	mu    sync.Mutex
	kinds map[string]*quietKind // guarded by mu
}

type quietKind struct {
	msg   string
	args  []any
	last  time.Time   // when the last line of this kind was written
	held  int         // lines held back since
	timer *time.Timer // ends the interval
}

func newQuietLog(log *slog.Logger, every time.Duration) *quietLog {
	return &quietLog{log: log, every: every, kinds: map[string]*quietKind{}}
}

// Warn logs msg with args (and uid, unless uid < 0) unless a line of the
// same kind went out less than an interval ago.
func (q *quietLog) Warn(msg string, uid int, args ...any) {
	if uid >= 0 {
		args = append([]any{"uid", uid}, args...)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	key := msg + "\x00" + strconv.Itoa(uid)
	if q.kinds[key] == nil && len(q.kinds) >= maxQuietKeys {
		key = msg
	}
	k := q.kinds[key]
	now := time.Now()
	switch {
	case k == nil:
		k = &quietKind{msg: msg, args: args, last: now}
		q.kinds[key] = k
		q.log.Warn(msg, args...)
		k.timer = time.AfterFunc(q.every, func() { q.tick(key) })
	case now.Sub(k.last) >= q.every:
		q.write(k, now, args)
	default:
		k.held++
		k.args = args
	}
}

// write logs the kind's line, with how many were held back before it.
func (q *quietLog) write(k *quietKind, now time.Time, args []any) {
	if k.held > 0 {
		args = append(args, "repeated", k.held, "within", q.every)
	}
	q.log.Warn(k.msg, args...)
	k.last, k.held = now, 0
}

// tick ends an interval of a kind: the lines held back are summed up; a
// kind quiet for a whole interval is forgotten.
func (q *quietLog) tick(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := q.kinds[key]
	if k == nil { // closed
		return
	}
	now := time.Now()
	switch {
	case k.held > 0:
		q.write(k, now, k.args)
	case now.Sub(k.last) >= q.every:
		delete(q.kinds, key)
		return
	}
	k.timer = time.AfterFunc(k.last.Add(q.every).Sub(now), func() { q.tick(key) })
}

// close writes what is held back and stops the timers; the server calls it
// when it stops, after the last Warn.
func (q *quietLog) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for key, k := range q.kinds {
		k.timer.Stop()
		if k.held > 0 {
			q.write(k, time.Now(), k.args)
		}
		delete(q.kinds, key)
	}
}
