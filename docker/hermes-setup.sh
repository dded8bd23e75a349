#!/bin/sh
# First-boot setup of the Hermes Agent image: hinit's boot hook
# "hermes-setup" (docker/hinit.yaml), installed as /etc/hinit/hermes-setup.sh.
# It replaces stage2-hook.sh of the s6-overlay image.
#
# hinit runs it as root (as the container's user under --user), with the
# container environment, after the runtime dirs are made and before the
# gateways are reconciled, so no process of this container's hermes user
# runs yet. Another container on the same volume (the split dashboard and
# gateways containers of docs/image.md) may run hermes processes all the
# while: anything in $HERMES_HOME may be swapped between a check and the
# act. So root only chowns there, through hinit chown-tree (each dir held
# open, each entry judged and changed through a descriptor of its own,
# never a path a swap can redirect; chown -h only for a file mounted at its
# name, which cannot be renamed, or at a boot that found the volume
# another's); what writes or chmods a file of the volume runs as hermes,
# and each such write is bounded. The steps that
# run as hermes (python_steps) come after root's last change in the volume.
#
# It only warns about what it cannot do (a volume it may not write, an
# absent tool); it exits non-zero only on a bug, which stops the container.
set -eu

# Every command is looked up in root's own dirs. The container's PATH (the
# official image's) holds /opt/data/.local/bin, a dir of the hermes user's
# volume, ahead of /usr/bin: a program planted there as `id`, `tr` or
# `s6-setuidgid` would run as root at the next boot. (hinit gives a root
# hook only the dirs of PATH only root can change; this hook does not rely
# on it.) What the hook runs as hermes (mkdir, cp, chmod, sh) is looked up
# in root's dirs too: one hermes planted there would run as hermes only,
# but could hang, and hold every boot until the hook's own timeout stops
# the container. Only hermes' python steps get the container's whole PATH
# back (py_run), as the environment dir holds it: hermes' code runs there.
PATH_ROOT=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CONTAINER_PATH=${PATH:-$PATH_ROOT}
step_path= # as_hermes' PATH while py_run runs a step; none from the environment
PATH=$PATH_ROOT
export PATH
envpath=${HINIT_RUNTIME_DIR:-/run/hinit}/env/PATH
if [ -f "$envpath" ] && [ ! -L "$envpath" ] && p=$(cat "$envpath" 2>/dev/null) && [ -n "$p" ]; then
	CONTAINER_PATH=$p
fi

HERMES_HOME="${HERMES_HOME:-/opt/data}"
INSTALL_DIR="${HERMES_INSTALL_DIR:-/opt/hermes}"
# Dirs hermes expects in its home; created as hermes.
SEED_DIRS="backups cron sessions logs logs/gateways hooks memories skills skins plans workspace home profiles pairing platforms platforms/pairing lazy-packages"
# Dirs given back to hermes, recursively, when something in them is not
# hermes' (a volume written by root, a restored backup). Never the whole
# volume: it may hold files that must stay someone else's.
OWNED_DIRS="cron sessions logs hooks memories skills skins plans workspace home profiles pairing platforms/pairing lazy-packages"
# Trees given back on every boot: docker exec writes them as root.
EVERY_BOOT_DIRS="profiles cron platforms/pairing pairing"
# Top-level state files given back on every boot: stage2's allow-list, the
# top-level files of hermes' own list of what is the user's
# (profile_distribution.USER_OWNED_EXCLUDE: .update_check errors.log
# .hermes_history), the kanban database stage2 names, and SOUL.md; no other
# file at the top of the volume is ever touched.
TOP_FILES="auth.json auth.lock .env state.db state.db-shm state.db-wal hermes_state.db response_store.db response_store.db-shm response_store.db-wal gateway.pid gateway.lock gateway_state.json processes.json active_profile .update_check errors.log .hermes_history kanban.db kanban.db-shm kanban.db-wal config.yaml SOUL.md"
# Browser binaries agent-browser can drive, by file name (the Playwright
# tree also holds executable .so files, which are no browser).
BROWSER_NAMES="chrome chromium chrome-headless-shell headless_shell chromium-browser"

# With a terminal, the terminal belongs to main (hermes --tui): lines go to
# hinit's own log file instead, as hinit's do.
if [ -t 2 ]; then
	exec 2>>"${HINIT_RUNTIME_DIR:-/run/hinit}/hinit.log" || exec 2>/dev/null
fi
exec 1>&2

say() { printf '[hermes-setup] %s\n' "$*"; }
is_root() { [ "$(id -u)" = 0 ]; }
hook_start=$(date +%s)

# timeout(1) by its path in root's dirs, for what runs as hermes (as_hermes;
# hermes' python steps with the container's PATH): a timeout planted in
# hermes' dir there would bound nothing. busybox's applet when no dir has a file of that
# name (busybox sh's command -v says a bare name for an applet). None
# found: what it would bound runs unbounded, said once (bounded).
TIMEOUT= TIMEOUT_APPLET=
for t in /usr/local/bin/timeout /usr/bin/timeout /bin/timeout /usr/local/bin/busybox /usr/bin/busybox /bin/busybox; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	TIMEOUT=$t
	case $t in */busybox) TIMEOUT_APPLET=timeout ;; esac
	break
done
[ -n "$TIMEOUT" ] || say "warning: no timeout(1) in root's dirs: the steps run as hermes are not bounded"

# bounded SECS CMD...: CMD under timeout(1) for SECS seconds (TERM, then
# KILL 5 s later), as hermes (hermes_run). timeout runs as the hook's user,
# root, and switches to hermes under it: run as hermes, a process of the
# step (hermes' code, a program planted in hermes' PATH) could stop it
# (SIGSTOP), and the hook waited for it until hinit's own timeout stopped
# the container, at every boot.
bounded() {
	secs=$1
	shift
	hermes_run "$secs" "$@"
}

# limited SECS CMD...: CMD under timeout(1) for SECS seconds, when SECS is
# set and there is a timeout(1); else CMD.
limited() {
	lim=$1
	shift
	if [ -n "$lim" ] && [ -n "$TIMEOUT" ]; then
		"$TIMEOUT" ${TIMEOUT_APPLET:+"$TIMEOUT_APPLET"} -k 5 "$lim" "$@"
	else
		"$@"
	fi
}

# valid_id N: digits only, 1-65534 (UID/GID 0 is refused, as stage2 does);
# at most nine digits, so that test(1) never sees a number it cannot hold.
valid_id() {
	case "$1" in '' | *[!0-9]*) return 1 ;; esac
	[ ${#1} -le 9 ] && [ "$1" -ge 1 ] && [ "$1" -le 65534 ]
}

# decimal N: N without its leading zeros ("010" is 10, as usermod reads it;
# the shell's arithmetic would read it as octal).
decimal() {
	n=${1#"${1%%[!0]*}"}
	echo "${n:-0}"
}

# set_field FILE NAME FIELD VALUE: sets field FIELD of the NAME line of an
# /etc/passwd-style FILE, written beside it and renamed over it.
set_field() {
	tmp="$1.hinit-$$"
	cp -p "$1" "$tmp" 2>/dev/null &&
		awk -F: -v OFS=: -v n="$2" -v f="$3" -v v="$4" '$1 == n { $f = v } { print }' "$1" >"$tmp" &&
		mv -f "$tmp" "$1" && return 0
	rm -f "$tmp"
	return 1
}

# remap_ids: HERMES_UID/HERMES_GID (or the PUID/PGID aliases; HERMES_*
# wins) give the hermes account new ids before anything runs as it. The
# account files are edited directly (it works on a base without shadow);
# what usermod -u also does, give the account's home (the volume) what the
# old UID owned there, is done by follow_uid, after the allow-list repair.
# The UIDs hermes had before a change whose follow_uid has not run to its
# end are in $old_uid (one or more, space-separated): the change is
# recorded in REMAP_PENDING, root's, before /etc/passwd is edited, and the
# record removed only once follow_uid has walked the volume; a boot stopped
# in between (the hook's timeout on a big volume, docker stop, the OOM
# killer) leaves it, and the next boot, which finds the account already
# remapped, finishes the walk instead of leaving the old UID's files for
# good.
REMAP_PENDING=/etc/hermes-uid-remap.pending
old_uid=
remap_ids() {
	uid=${HERMES_UID:-${PUID:-}}
	gid=${HERMES_GID:-${PGID:-}}
	if is_root && [ -f "$REMAP_PENDING" ] && [ ! -L "$REMAP_PENDING" ]; then
		for u in $(cat "$REMAP_PENDING" 2>/dev/null); do
			valid_id "$u" && [ "$u" != "$(id -u hermes)" ] && old_uid="$old_uid $u"
		done
		old_uid=${old_uid# }
		[ -z "$old_uid" ] || say "finishing the UID change of an earlier boot: what UID $old_uid owned goes to hermes"
	fi
	[ -n "$uid$gid" ] || return 0
	if ! is_root; then
		say "warning: HERMES_UID/PUID need a root start; ids left as they are"
		return 0
	fi
	if [ -n "$uid" ] && ! valid_id "$uid"; then
		say "warning: ignoring HERMES_UID/PUID '$uid' (want a number from 1 to 65534)"
		uid=
	fi
	if [ -n "$gid" ] && ! valid_id "$gid"; then
		say "warning: ignoring HERMES_GID/PGID '$gid' (want a number from 1 to 65534)"
		gid=
	fi
	[ -z "$uid" ] || uid=$(decimal "$uid")
	[ -z "$gid" ] || gid=$(decimal "$gid")
	# A UID another account has would make the two one user, and every
	# lookup by UID (setpriv --init-groups, ls) find the other: usermod -u
	# refuses it too. A shared GID is allowed, as groupmod -o does (PGID=100
	# is the users group of many NAS).
	taken=$(awk -F: -v u="$uid" 'u != "" && $3 == u && $1 != "hermes" { print $1; exit }' /etc/passwd)
	if [ -n "$taken" ]; then
		say "warning: ignoring HERMES_UID/PUID $uid: it is the UID of account $taken; hermes keeps its UID"
		uid=
	fi
	if [ -n "$uid" ] && [ "$uid" != "$(id -u hermes)" ]; then
		say "changing hermes UID to $uid"
		was=$(id -u hermes)
		pending="$REMAP_PENDING.hinit-$$"
		if (umask 077 && printf '%s\n' $old_uid "$was" >"$pending") 2>/dev/null && mv -f "$pending" "$REMAP_PENDING" 2>/dev/null &&
			set_field /etc/passwd hermes 3 "$uid"; then
			old_uid=${old_uid:+$old_uid }$was
		else
			rm -f "$pending"
			say "warning: cannot change /etc/passwd (read-only root?); hermes keeps its UID"
			uid_refused=$uid
		fi
	fi
	if [ -n "$gid" ] && [ "$gid" != "$(id -g hermes)" ]; then
		say "changing hermes GID to $gid"
		# Two files: the group's line, then the account's. When the second
		# cannot be written, the first is put back, so that the group
		# named hermes stays hermes' group.
		old=$(awk -F: '$1 == "hermes" { print $3; exit }' /etc/group)
		if ! set_field /etc/group hermes 3 "$gid"; then
			say "warning: cannot change /etc/group (read-only root?); hermes keeps its GID"
		elif ! set_field /etc/passwd hermes 4 "$gid"; then
			set_field /etc/group hermes 3 "$old" ||
				say "warning: cannot put /etc/group back: group hermes is $gid, hermes' own GID is still $old"
			say "warning: cannot change /etc/passwd (read-only or bind-mounted?); hermes keeps its GID"
		fi
	fi
}

# join_group PATH LABEL: adds hermes to the group owning PATH (the docker
# socket, a /dev/dri node), naming a group the image lacks LABEL, so that
# main and the services hinit starts as hermes get it (stage2's #16703).
join_group() {
	g=$(stat -c %g "$1" 2>/dev/null) || return 0
	if id -G hermes | tr ' ' '\n' | grep -qx "$g"; then
		return 0
	fi
	name=$(awk -F: -v g="$g" '$3 == g { print $1; exit }' /etc/group)
	if [ -z "$name" ]; then
		name=$2
		if ! { cp -p /etc/group "/etc/group.hinit-$$" && printf '%s:x:%s:\n' "$name" "$g" >>"/etc/group.hinit-$$" &&
			mv -f "/etc/group.hinit-$$" /etc/group; }; then
			rm -f "/etc/group.hinit-$$"
			say "warning: cannot add group $name ($g) for $1"
			return 0
		fi
	fi
	members=$(awk -F: -v n="$name" '$1 == n { print $4; exit }' /etc/group)
	if set_field /etc/group "$name" 4 "${members:+$members,}hermes"; then
		say "added hermes to group $name ($g) for $1"
	else
		say "warning: cannot add hermes to group $name ($g) for $1"
	fi
}

# join_device_groups: the docker socket's group and the /dev/dri groups.
join_device_groups() {
	is_root || return 0
	for sock in /var/run/docker.sock /run/docker.sock; do
		# /run is 1777 and docker restart keeps it: the socket itself,
		# not a link hermes put there to another of root's sockets (a
		# symlink, or a hard link where fs.protected_hardlinks is 0),
		# whose group hermes would join.
		if [ -S "$sock" ] && [ ! -L "$sock" ] && [ "$(stat -c %h "$sock")" = 1 ]; then
			join_group "$sock" hostdocker
			break
		fi
	done
	for dev in /dev/dri/renderD* /dev/dri/card*; do
		[ -c "$dev" ] || continue
		# A node of group root would make hermes a member of root's group
		# (every file root's group may write) for a GPU; the docker socket
		# of group 0 is joined, as stage2 does: it gives root already. So
		# would a node whose host gid is, in the image, a group that reads
		# or writes what is root's or other users' (shadow: /etc/shadow;
		# disk: every disk; tty: every terminal): a gid is what the kernel
		# checks, whatever the name.
		g=$(stat -c %g "$dev" 2>/dev/null) || continue
		name=$(awk -F: -v g="$g" '$3 == g { print $1; exit }' /etc/group)
		case "$g:$name" in
		0:* | *:shadow | *:disk | *:kmem | *:sudo | *:wheel | *:adm | *:staff | *:tty | *:root)
			say "warning: $dev belongs to group ${name:-$g} ($g), which in this image gives more than a GPU: hermes is not added to it (give the node a group of its own)"
			continue
			;;
		esac
		case $dev in */renderD*) join_group "$dev" hostrender ;; *) join_group "$dev" hostvideo ;; esac
	done
}

# linked PATH: succeeds, saying "refusing", when a component of PATH at
# or below $HERMES_HOME (or PATH itself) is a symlink.
linked() {
	lp=$1
	while :; do
		if [ -L "$lp" ]; then
			say "warning: refusing to go through symlink $lp (for $1)"
			return 0
		fi
		case $lp in "$HERMES_HOME" | / | .) return 1 ;; esac
		lp=$(dirname "$lp")
	done
}

# no_link PATH: the opposite of linked.
no_link() { ! linked "$1"; }

# top_file PATH: PATH, at the top of the volume, is a regular file, and
# neither it nor the volume is a symlink (quietly: fix_ownership has said
# why it skipped one).
top_file() { [ -f "$1" ] && [ ! -L "$1" ] && [ ! -L "$HERMES_HOME" ]; }

# shared PATH: succeeds, saying "refusing" once per path, when PATH is a
# file with other hard links: a chown, chmod or write of it would change
# the file of whoever else it is linked from (a host's file, or with
# fs.protected_hardlinks=0 any file of the filesystem).
refused_links=
shared() {
	[ -f "$1" ] && [ ! -L "$1" ] && [ "$(stat -c %h "$1")" -gt 1 ] || return 1
	case " $refused_links " in
	*" $1 "*) ;;
	*)
		refused_links="$refused_links $1"
		say "warning: refusing to change $1: it has other hard links"
		;;
	esac
}

# own PATH: gives PATH (not what it points to) to hermes when root.
own() {
	if is_root; then chown -h "$HUID:$HGID" "$1"; fi
}

# seed_dir REL: creates $HERMES_HOME/REL as hermes' when missing; a
# failure is added to $failed_dirs, reported once for all of them. As
# hermes: a dir on the way (logs of logs/gateways) swapped for a symlink
# meanwhile leads nowhere root may write.
seed_dir() {
	d=$HERMES_HOME/$1
	no_link "$d" || return 0
	[ -d "$d" ] && return 0
	as_hermes mkdir "$d" 2>/dev/null || failed_dirs="$failed_dirs $1"
}

# seed_file SRC REL: copies SRC to $HERMES_HOME/REL, as hermes' and
# writable by hermes (the image's SOUL.md is 0444), when SRC exists and REL
# does not. As hermes: a symlink put at REL meanwhile leads nowhere root may
# write. Bounded: a FIFO put there meanwhile (by a hermes process of
# another container on the volume) holds cp's open until timeout(1) ends
# it, not the boot until the hook's own timeout stops the container.
seed_file() {
	d=$HERMES_HOME/$2
	[ -f "$1" ] || return 0
	no_link "$d" || return 0
	[ -e "$d" ] && return 0
	{ bounded 10 cp "$1" "$d" && bounded 10 chmod u+rw "$d"; } 2>/dev/null || say "warning: cannot seed $d"
}

# not_hermes PATH: something in the tree PATH is not hermes:hermes.
not_hermes() {
	[ -n "$(find "$1" \( ! -user "$HUID" -o ! -group "$HGID" \) -print 2>/dev/null | head -n 1)" ]
}

# give_tree REL [root]: gives $HERMES_HOME/REL back to hermes, recursively
# (symlinks inside are changed themselves, never followed), when something
# in it is not hermes'; with root, only what root owns there (what docker
# exec as root writes) and hermes' own files of another group: another
# user's file is left, and another user's dir not gone into, with a
# warning (chown-tree -from-root). What has other hard links keeps its
# owner (shared).
give_tree() {
	gp=$HERMES_HOME/$1
	[ -e "$gp" ] || [ -L "$gp" ] || return 0
	no_link "$gp" || return 0
	[ -d "$gp" ] || return 0
	not_hermes "$gp" || return 0
	if [ "${2:-}" = root ]; then
		say "giving what root owns in $gp to hermes ($HUID:$HGID)"
		chown_tree -from-root "$HUID:$HGID" "$gp" || say "warning: cannot chown all of $gp (a read-only filesystem?)"
		return 0
	fi
	say "giving $gp back to hermes ($HUID:$HGID)"
	# (what cannot be read or changed, a dir root may not read without
	# CAP_DAC_OVERRIDE or on NFS, a read-only filesystem, is skipped with
	# one warning, not a line per file; it must not end the hook: set -e; a
	# mount inside the tree is never gone into)
	chown_tree "$HUID:$HGID" "$gp" || say "warning: cannot chown all of $gp (a read-only filesystem?)"
}

# chown_tree [-xdev] [-from-uid N | -from-root] UID[:GID] PATH: hinit chown-tree, the
# recursive chown that holds each dir open and changes each entry through a
# descriptor of its own: a path walk (find -exec chown -h DIR/SUB/FILE)
# follows a dir that a hermes process of another container on the volume
# swapped for a symlink meanwhile, and chowned root's files. A file with
# other hard links is left alone, with a warning (but with -from-uid: every
# link of it is that UID's); a mount inside the tree keeps its owners.
chown_tree() {
	hinit=$(command -v hinit) || {
		say "warning: no hinit here to chown with"
		return 1
	}
	if out=$("$hinit" chown-tree "$@" 2>/dev/null); then ok=0; else ok=1; fi
	[ -z "$out" ] || printf '%s\n' "$out" | while IFS= read -r l; do say "warning: $l"; done
	return $ok
}

# fix_ownership: as root, gives hermes back what is hermes' in the volume,
# by allow-list only, as stage2 does (hermes#19788): the volume's top dir
# and OWNED_DIRS when the top dir's UID is not hermes' (a new volume, a new
# UID; stage2 compares the UID alone: a volume of hermes' UID shared through
# another group keeps that group on these trees);
# on every boot the trees root writes through docker exec and the files of
# TOP_FILES, which also get u+rw (a 0444 SOUL.md made hermes' config
# migration fail and roll back). Anything else in the volume (a host's
# file, a bind mount) keeps its owner: stage2 now gives hermes every file at
# the top of the volume, hinit does not.
# A name proves nothing where hermes could choose it: hermes owns the
# volume's top dir and may rename any entry of it (another user's file to
# auth.json, a dir to cron). So at a boot that finds the top dir hermes'
# already, the every-boot trees and TOP_FILES give hermes only what root
# owns (what docker exec as root writes) and regroup hermes' own; another
# user's file there is left, and its dir not gone into, with a warning; a
# file mounted at such a name is the operator's and given as before. Whole,
# whatever owns them, only when the top dir was not hermes' (hermes chose
# no name in it).
fix_ownership() {
	is_root || return 0
	no_link "$HERMES_HOME" || return 0
	# A UID asked for and not taken (a read-only root): the volume is that
	# UID's, who asked for it to stay theirs; it is left as it is, and
	# hermes, which keeps its own UID, may not write it.
	if [ -n "${uid_refused:-}" ] && [ "$(stat -c %u "$HERMES_HOME")" = "$uid_refused" ]; then
		say "warning: $HERMES_HOME is UID $uid_refused's, which hermes could not take: its files keep their owner, and hermes ($HUID) may not write them; run with --user $uid_refused:$(stat -c %g "$HERMES_HOME"), or without --read-only (the UID is changed in /etc/passwd at every start)"
		return 0
	fi
	whose=root
	if [ "$(stat -c %u "$HERMES_HOME")" != "$HUID" ]; then
		whose=
		say "giving $HERMES_HOME and its hermes dirs to hermes ($HUID:$HGID)"
		for d in $OWNED_DIRS; do give_tree "$d"; done
		# The top dir last: a boot stopped before the end finds it not
		# hermes' again, and gives the dirs whole again.
		chown "$HUID:$HGID" "$HERMES_HOME" || say "warning: cannot chown $HERMES_HOME"
	fi
	# (given whole above when the top dir was not hermes': each is one of
	# OWNED_DIRS, and a second walk only said each refusal twice)
	[ -z "$whose" ] || for d in $EVERY_BOOT_DIRS; do give_tree "$d" root; done
	p=$HERMES_HOME/logs/gateways
	# the dir alone, opened as chown_tree opens a tree (a chown -h of the
	# path would go through a logs swapped for a symlink meanwhile)
	if [ -d "$p" ] && no_link "$p"; then chown_tree -top "$HUID:$HGID" "$p" || say "warning: cannot chown $p"; fi
	for f in $TOP_FILES; do
		p=$HERMES_HOME/$f
		[ -e "$p" ] || [ -L "$p" ] || continue
		no_link "$p" || continue
		[ -f "$p" ] || continue
		shared "$p" && continue
		# A file mounted there is the operator's, and a mount point cannot
		# be renamed: given whole, as is any at a boot that found the top
		# dir another's (hermes chose no name in it). Else only root's, or
		# hermes' of another group, judged and changed through one
		# descriptor (chown_tree): a hermes process of another container on
		# the volume may swap another user's file in at this name between a
		# stat and a chown of the path.
		if [ -z "$whose" ] || mounted "$p"; then
			own "$p" || say "warning: cannot chown $p"
		else
			# said, as give_tree says it of a tree: a root file hermes
			# renamed here (an operator's secret) is given too
			[ "$(stat -c %u "$p")" != 0 ] || say "giving root's $p to hermes ($HUID:$HGID)"
			chown_tree -from-root "$HUID:$HGID" "$p" || say "warning: cannot chown $p"
		fi
		case $(stat -c %A "$p") in ?rw*) ;; *) as_hermes chmod u+rw "$p" || say "warning: cannot chmod u+rw $p" ;; esac
	done
}

# mounted PATH: PATH is a mount point (a file bind-mounted over the
# volume's): the 5th field of a line of mountinfo, whose spaces and
# backslashes are escaped there.
mounted() {
	m=$(printf %s "$1" | sed 's/\\/\\134/g; s/ /\\040/g')
	awk -v m="$m" '$5 == m { found = 1 } END { exit !found }' /proc/self/mountinfo 2>/dev/null
}

# follow_uid: after a UID change, what the old UID owns in the volume
# becomes the new UID's, as stage2's `usermod -u N hermes` does for the
# account's home (/opt/data): its backups, caches, checkpoints,
# a user's notes... are no allow-listed path, and were left to a UID
# hermes no longer has. As usermod: only when the volume's top dir was the
# old or the new UID's ($home_uid, read before fix_ownership), the owner
# alone (the group stays), a symlink itself, never followed; a file with
# other hard links too (uv's cache and venvs, git's objects): every link
# of it is the old UID's. It stays on the volume's filesystem (-xdev) and
# never goes into a mount: a host dir mounted inside it keeps its owners,
# as the allow-list repair leaves it. Once the walk has run to its end
# (whatever it could not change is said), the change is no longer
# pending (remap_ids).
follow_uid() {
	[ -n "$old_uid" ] && is_root || return 0
	for u in $old_uid; do
		[ "$u" != "$HUID" ] || continue # a change undone: nothing to give
		[ "$home_uid" = "$u" ] || [ "$home_uid" = "$HUID" ] || continue
		no_link "$HERMES_HOME" || continue
		[ -n "$(find "$HERMES_HOME" -user "$u" -print 2>/dev/null | head -n 1)" ] || continue
		say "giving what UID $u owned in $HERMES_HOME to hermes' new UID $HUID"
		chown_tree -xdev -from-uid "$u" "$HUID" "$HERMES_HOME" ||
			say "warning: cannot chown all of what UID $u owned in $HERMES_HOME"
	done
	rm -f "$REMAP_PENDING"
}

# secret_modes: config.yaml 0640 and .env 0600, after they are seeded and
# the key is written, so that neither is ever left readable by others.
# Always as hermes: a file of another owner (a bind-mounted secret that
# fix_ownership could not give hermes) keeps its mode, with a warning. Root
# never chmods a name in hermes' dir: a hermes process of another container
# on the volume could rename a file of another owner there and swap it for
# a symlink between the check and the chmod, and root's chmod 600 then
# landed on whatever it pointed to (/usr/local/bin/hinit: no more boots).
secret_modes() {
	for f in config.yaml:640 .env:600; do
		p=$HERMES_HOME/${f%:*}
		top_file "$p" || continue
		shared "$p" && continue
		mode=$(stat -c %a "$p" 2>/dev/null) || continue # gone meanwhile (set -e)
		[ "$mode" = "${f#*:}" ] && continue
		if ! is_root || [ "$(stat -c %u "$p")" = "$HUID" ]; then
			as_hermes chmod "${f#*:}" "$p" 2>/dev/null || say "warning: cannot chmod ${f#*:} $p"
		else
			say "warning: $p is not hermes' and keeps its mode $mode: make it ${f#*:} where it comes from"
		fi
	done
}

# real_home: HERMES_REAL_HOME (the account's real home, HOME of the
# dashboard and the gateways) is created as hermes', and so is each dir
# made on the way to it inside the volume: HERMES_REAL_HOME=/opt/data/home/hermes
# on a new volume made a root /opt/data/home, which seed_dir then found there.
# Inside the volume it is made as hermes (after fix_ownership gave hermes
# the volume): a dir on the way swapped for a symlink meanwhile leads
# nowhere root may write.
real_home() {
	[ -n "${HERMES_REAL_HOME:-}" ] || return 0
	is_root || return 0
	# mkdir -p would follow a symlink at any level (one the hermes user
	# left in its volume, or its home) and make a hermes dir wherever it led.
	linked "$HERMES_REAL_HOME" && return 0
	[ -d "$HERMES_REAL_HOME" ] && return 0
	case $HERMES_REAL_HOME in
	"${HERMES_HOME%/}"/*)
		as_hermes mkdir -p "$HERMES_REAL_HOME" 2>/dev/null || say "warning: cannot create $HERMES_REAL_HOME"
		return 0
		;;
	esac
	if ! mkdir -p "$HERMES_REAL_HOME" 2>/dev/null; then
		say "warning: cannot create $HERMES_REAL_HOME"
		return 0
	fi
	own "$HERMES_REAL_HOME" || say "warning: cannot chown $HERMES_REAL_HOME"
}

# env_head: the first MiB of $env_file, read for at most 5 s (api_key).
env_head() {
	timeout 5 head -c 1048576 "$env_file" 2>/dev/null
}

# api_key: the gateway's API server needs a key; one is generated once.
# A key the operator gave the container (docker run -e API_SERVER_KEY=...)
# wins, as in hermes' newer stage2: hermes loads .env over the
# environment, so a key generated into it would shadow the operator's and
# every client using that key would get 401. An empty API_SERVER_KEY=
# line would shadow it too, with no key at all, and is dropped.
api_key() {
	env_file=$HERMES_HOME/.env
	if [ -n "${API_SERVER_KEY:-}" ] && [ ${#API_SERVER_KEY} -lt 16 ]; then
		say "warning: the container's API_SERVER_KEY is shorter than 16 characters: hermes' API server refuses it and does not start"
	fi
	# No .env (an image without the .env.example it is seeded from): an
	# empty one, hermes' and 0600, holds the key, as in hermes' newer
	# stage2; without it there was no key, no API server, and every
	# scheduled cron fire through it was lost.
	if [ -z "${API_SERVER_KEY:-}" ] && [ ! -e "$env_file" ] && [ ! -L "$env_file" ] && no_link "$env_file"; then
		# shellcheck disable=SC2016 # expanded by the inner sh
		bounded 10 sh -c 'umask 077 && set -C && : >"$1"' sh "$env_file" 2>/dev/null || say "warning: cannot create $env_file"
	fi
	top_file "$env_file" || return 0
	shared "$env_file" && return 0
	# Every read of a name in hermes' dir is bounded (timeout): swapped for
	# a FIFO meanwhile by a hermes process of another container, it held
	# the boot until the hook's own timeout stopped the container. And only
	# its first MiB is read: grep holds a whole line, and hermes may make
	# .env one line of gigabytes, in root's memory at every boot.
	if env_head | grep -q '^API_SERVER_KEY=..*'; then
		[ -z "${API_SERVER_KEY:-}" ] ||
			say "warning: API_SERVER_KEY is set in both the container environment and $env_file: the .env value wins (hermes loads .env over the environment)"
		return 0
	fi
	if [ -n "${API_SERVER_KEY:-}" ]; then
		env_head | grep -q '^API_SERVER_KEY=$' || return 0
		edit_env "" && return 0
		say "warning: cannot drop the empty API_SERVER_KEY= line of $env_file: it hides the container's API_SERVER_KEY from hermes"
		return 0
	fi
	key=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
	rc=0
	edit_env "$key" || rc=$? # set -e: a failure is said, the hook goes on
	case $rc in
	0) say "generated API_SERVER_KEY in $env_file" ;;
	2) say "warning: cannot add API_SERVER_KEY to $env_file: it is not hermes' (uid $(stat -c %u "$env_file")); the API server has no key until .env has one" ;;
	*) say "warning: cannot add API_SERVER_KEY to $env_file; the API server has no key until .env has one" ;;
	esac
}

# edit_env KEY: runs ADD_KEY on $env_file: drops an empty API_SERVER_KEY=
# line and, when KEY is not empty, adds API_SERVER_KEY=KEY. hermes' .env,
# in hermes' dir, is written as hermes: a name swapped meanwhile (the copy
# mktemp made, .env itself) by a hermes process of another container on
# the volume then leads nowhere root may write. Root writes no file of
# another owner by its name in hermes' dir (a bind-mounted .env
# fix_ownership could not give hermes): a hermes process of another
# container on the volume could swap it for a symlink meanwhile, and
# root's write then landed wherever it led; that is status 2.
edit_env() {
	if is_root && [ "$(stat -c %u "$env_file")" = "$HUID" ]; then
		API_SERVER_KEY_NEW=$1 bounded 10 /bin/sh -c "$ADD_KEY" sh "$env_file"
		return
	fi
	is_root && return 2
	API_SERVER_KEY_NEW=$1 timeout 10 sh -c "$ADD_KEY" sh "$env_file"
}

# ADD_KEY: sh -c script adding API_SERVER_KEY=$API_SERVER_KEY_NEW to $1
# (nothing when it is empty: the empty line only goes).
# An empty API_SERVER_KEY= line is no key, and is dropped, as stage2
# does (sed -i): left above the generated one, it is the line hermes'
# writer (hermes config set, the setup wizard) replaces, the first one,
# while the last one, the generated key, is the one read. The copy
# beside it keeps .env's owner and mode (cp -p) and is renamed over it;
# a .env that cannot be renamed over (a bind-mounted file, when hinit runs
# as hermes' uid) gets the key appended. The copy is made by mktemp, a new file of a name nobody could
# plant a symlink at beforehand. A .env root may not write (bind-mounted
# read-only, a Kubernetes secret, NFS with root_squash) is the
# operator's: a warning, not a container that never starts.
# shellcheck disable=SC2016 # expanded by the inner sh
ADD_KEY='
env_file=$1 tmp=
if grep -q "^API_SERVER_KEY=\$" "$env_file" && tmp=$(mktemp "$env_file.hinit-XXXXXX" 2>/dev/null) &&
	cp -p "$env_file" "$tmp" 2>/dev/null &&
	{ grep -v "^API_SERVER_KEY=\$" "$env_file" || [ $? = 1 ]; } >"$tmp" &&
	{ [ -z "$API_SERVER_KEY_NEW" ] || printf "API_SERVER_KEY=%s\n" "$API_SERVER_KEY_NEW" >>"$tmp"; } &&
	mv -f "$tmp" "$env_file" 2>/dev/null; then
	exit 0
fi
[ -z "$tmp" ] || rm -f "$tmp"
[ -n "$API_SERVER_KEY_NEW" ] || exit 1 # only the empty line was to go, and it could not
nl=
[ -z "$(tail -c 1 "$env_file")" ] || nl="\n"
{ printf "${nl}API_SERVER_KEY=%s\n" "$API_SERVER_KEY_NEW" >>"$env_file"; } 2>/dev/null
'

# stale_stamp: an .install_method of "docker" in the volume is an older
# image's stamp (the stamp is /opt/hermes' now); a host install sharing the
# volume would read it and refuse to update.
stale_stamp() {
	p=$HERMES_HOME/.install_method
	top_file "$p" || return 0
	# (its first bytes only, and bounded: the hermes user may have made it
	# huge, or swapped it for a FIFO)
	[ "$(timeout 5 head -c 64 "$p" 2>/dev/null | tr -d '[:space:]')" = docker ] || return 0
	if rm -f "$p" 2>/dev/null; then
		say "removed the stale docker stamp $p"
	else
		say "warning: cannot remove the stale docker stamp $p"
	fi
}

# auth_bootstrap: auth.json from HERMES_AUTH_JSON_BOOTSTRAP, once: an
# auth.json already there (rotated tokens) is never replaced. It is
# created by hermes, mode 0600 from its first byte, and never through a
# symlink; the secret goes through the environment, never a command line.
# Bounded, as seed_file is: set -C does not refuse a FIFO.
auth_bootstrap() {
	[ -n "${HERMES_AUTH_JSON_BOOTSTRAP:-}" ] || return 0
	p=$HERMES_HOME/auth.json
	[ -e "$p" ] || [ -L "$p" ] && return 0
	no_link "$p" || return 0
	# shellcheck disable=SC2016 # expanded by the inner sh
	bounded 10 sh -c 'umask 077 && set -C && printf %s "$HERMES_AUTH_JSON_BOOTSTRAP" >"$1"' sh "$p" || :
	if [ -f "$p" ]; then say "wrote $p from HERMES_AUTH_JSON_BOOTSTRAP"; else say "warning: cannot write $p"; fi
}

# browser_path: agent-browser does not find Playwright's Chromium by itself
# (hermes#15697); its path is given to every later start through the
# environment dir, unless AGENT_BROWSER_EXECUTABLE_PATH is set already.
browser_path() {
	[ -z "${AGENT_BROWSER_EXECUTABLE_PATH:-}" ] && [ -n "${PLAYWRIGHT_BROWSERS_PATH:-}" ] || return 0
	[ -d "$PLAYWRIGHT_BROWSERS_PATH" ] || return 0
	# One walk for every name, bounded: the path may be in the volume, a
	# tree hermes grows. Then the first name of BROWSER_NAMES found wins.
	set --
	for n in $BROWSER_NAMES; do set -- "$@" ${1+-o} -name "$n"; done
	found=$(limited 60 find "$PLAYWRIGHT_BROWSERS_PATH" -type f \( "$@" \) -perm -100 2>/dev/null) || true
	bin=
	for n in $BROWSER_NAMES; do
		# a line of found that is a whole path under the dir: a name with a
		# newline in it splits into lines that may look like other paths
		bin=$(printf '%s\n' "$found" | under="${PLAYWRIGHT_BROWSERS_PATH%/}/" awk -v n="$n" -F/ 'index($0, ENVIRON["under"]) == 1 && $NF == n { print; exit }')
		[ -z "$bin" ] || [ ! -f "$bin" ] || [ ! -x "$bin" ] || break
		bin=
	done
	if [ -z "$bin" ]; then
		say "warning: no Chromium binary under $PLAYWRIGHT_BROWSERS_PATH; the browser tool may fail"
		return 0
	fi
	envdir=${HINIT_RUNTIME_DIR:-/run/hinit}/env
	tmp=$envdir/.AGENT_BROWSER_EXECUTABLE_PATH
	if printf %s "$bin" >"$tmp" && chmod 640 "$tmp" && { ! is_root || chgrp "$HGID" "$tmp"; } &&
		mv -f "$tmp" "$envdir/AGENT_BROWSER_EXECUTABLE_PATH"; then
		say "agent-browser's Chromium: $bin"
	else
		rm -f "$tmp"
		say "warning: cannot write AGENT_BROWSER_EXECUTABLE_PATH into $envdir"
	fi
}

# as_hermes CMD...: runs CMD as hermes, its groups included, with root's
# PATH (CMD is looked up there), or the container's while py_run sets
# step_path: through the image's s6-setuidgid (hsvc's, the account as hinit
# starts it), else setpriv of util-linux, each found in root's PATH.
as_hermes() { hermes_run "" "$@"; }

# hermes_run SECS CMD...: as_hermes, under timeout(1) for SECS seconds when
# SECS is set (bounded); timeout(1) outside the switch to hermes.
hermes_run() {
	secs=$1
	shift
	if ! is_root; then
		limited "$secs" env PATH="${step_path:-$PATH_ROOT}" "$@"
	elif switch=$(command -v s6-setuidgid); then
		limited "$secs" env HOME="$HERMES_HOME" PATH="${step_path:-$PATH_ROOT}" "$switch" hermes "$@"
	elif switch=$(command -v setpriv) && "$switch" --help 2>&1 | grep -q -- --reuid; then
		limited "$secs" env HOME="$HERMES_HOME" PATH="${step_path:-$PATH_ROOT}" "$switch" --reuid="$HUID" --regid="$HGID" --init-groups -- "$@"
	else
		say "warning: no s6-setuidgid nor setpriv --reuid here; skipped: $1"
		return 1
	fi
}

# py_run FILE WHAT ARG...: runs the real image's venv python with ARG...
# as hermes, when it and FILE (what it runs) are there; a failure is a
# warning, as in the s6 image. So is a step still running when the steps'
# STEPS_TIMEOUT seconds together are up: hermes' code on hermes' files may
# hang (a FIFO planted as config.yaml), and the hook's own timeout (5m in
# hinit.yaml) would stop the container at every boot; a step after that is
# skipped. timeout(1) sends TERM, then KILL 5 s later; coreutils' to the
# step's whole process group. Its exit status differs by implementation
# (124, busybox 143), so a step that failed once its time was up is taken
# as stopped.
py_run() {
	py=$INSTALL_DIR/.venv/bin/python file=$1 what=$2
	shift 2
	[ -x "$py" ] && [ -f "$file" ] || return 0
	began=$(date +%s)
	left=$((steps_end - began))
	if [ "$left" -le 0 ]; then
		say "warning: $what skipped: $steps_budget are spent"
		return 0
	fi
	step_path=$CONTAINER_PATH
	if bounded "$left" "$py" "$@"; then
		step_path=
		return 0
	fi
	step_path=
	if [ $(($(date +%s) - began)) -ge "$left" ]; then
		say "warning: $what did not finish within $steps_budget: stopped; the boot goes on"
	else
		say "warning: $what failed"
	fi
}

# STEPS_TIMEOUT: how long the python steps (py_run) may run together, in
# whole seconds, within the hook's 5m: a slow volume's skills sync may take
# most of it. Within 270 s of the hook's start too (STEPS_LAST), whatever
# the bounded writes before them took (up to a minute, a FIFO swapped in at
# each): the hook's 5m must not stop the container. A STEPS_TIMEOUT above
# that says the hook's own timeout was raised too: then it alone counts.
STEPS_TIMEOUT=${HERMES_SETUP_STEPS_TIMEOUT:-240}
case $STEPS_TIMEOUT in
'' | *[!0-9]* | 0*)
	say "warning: HERMES_SETUP_STEPS_TIMEOUT=$STEPS_TIMEOUT is not a number of seconds: 240 taken"
	STEPS_TIMEOUT=240
	;;
esac
STEPS_LAST=270

# py_step SCRIPT WHAT [ARG...]: runs $INSTALL_DIR/SCRIPT (py_run).
py_step() {
	script=$INSTALL_DIR/$1 what=$2
	shift 2
	py_run "$script" "$what" "$script" "$@"
}

# py_module MODULE WHAT: runs hermes' MODULE with -m (py_run).
py_module() {
	py_run "$INSTALL_DIR/$(printf %s "$1" | tr . /).py" "$2" -m "$1"
}

# python_steps: the steps of stage2 after seeding, in its order: config
# migration, auth.json from the environment, the Nous session re-seed
# (HERMES_AUTH_JSON_REBOOTSTRAP, which the script reads from the
# environment), skills sync; then the s6 image's next cont-init script
# that is not the reconcile (hinit's own): each profile's git credentials
# from the GITHUB_TOKEN of its .env (03-provision-git-credentials).
python_steps() {
	steps_end=$(($(date +%s) + STEPS_TIMEOUT))
	steps_budget="the steps' ${STEPS_TIMEOUT}s (HERMES_SETUP_STEPS_TIMEOUT)"
	if [ "$STEPS_TIMEOUT" -le "$STEPS_LAST" ] && [ "$steps_end" -gt $((hook_start + STEPS_LAST)) ]; then
		steps_end=$((hook_start + STEPS_LAST))
		steps_budget="the hook's first ${STEPS_LAST}s (its own timeout is 5m)"
	fi
	[ "${HERMES_SKIP_CONFIG_MIGRATION:-}" = 1 ] || py_step scripts/docker_config_migrate.py "config migration"
	auth_bootstrap
	p=$HERMES_HOME/auth.json
	if [ -n "${HERMES_AUTH_JSON_REBOOTSTRAP:-}" ] && [ -f "$p" ] && no_link "$p"; then
		py_step scripts/docker_rebootstrap_nous_session.py "the Nous session re-seed" "$p"
	fi
	py_step tools/skills_sync.py "skills sync"
	py_module hermes_cli.git_credentials_boot "git credentials"
}

# legacy_s6: a derived image's s6-overlay service or cont-init script (as
# hermes' own skill for its s6 image adds them) is run by nobody under
# hinit: each one the base image did not ship gets a warning that says
# where it goes instead.
legacy_s6() {
	for p in /etc/s6-overlay/s6-rc.d/user/contents.d/* /etc/s6-overlay/s6-rc.d/user2/contents.d/* /etc/cont-init.d/* /etc/services.d/* /etc/cont-finish.d/*; do
		[ -e "$p" ] || [ -L "$p" ] || continue
		case $p in # what the hermes image itself ships
		/etc/s6-overlay/s6-rc.d/user/contents.d/main-hermes | /etc/s6-overlay/s6-rc.d/user/contents.d/dashboard) continue ;;
		/etc/cont-init.d/01-hermes-setup | /etc/cont-init.d/015-supervise-perms | /etc/cont-init.d/02-reconcile-profiles) continue ;;
		/etc/cont-init.d/03-provision-git-credentials) continue ;;
		esac
		say "warning: $p is for s6-overlay, which hinit replaces: nothing runs it; make it a boot: hook or a service in /etc/hinit/hinit.d/ (docs/migration-from-s6.md)"
	done
	# s6-overlay's own settings, left in a compose file or a pod spec:
	# hinit reads none, and a stop budget the user raised there is gone.
	set_s6=
	for v in S6_KILL_GRACETIME S6_SERVICES_GRACETIME S6_KILL_FINISH_MAXTIME S6_SERVICES_READYTIME \
		S6_CMD_WAIT_FOR_SERVICES S6_CMD_WAIT_FOR_SERVICES_MAXTIME S6_BEHAVIOUR_IF_STAGE2_FAILS \
		S6_READ_ONLY_ROOT S6_KEEP_ENV S6_LOGGING S6_VERBOSITY S6_SYNC_DISKS S6_CMD_RECEIVE_SIGNALS; do
		eval "[ -n \"\${$v+set}\" ]" && set_s6="$set_s6 $v"
	done
	[ -z "$set_s6" ] || say "warning:$set_s6: s6-overlay's settings, which hinit does not read; set HINIT_SHUTDOWN_TIMEOUT (the whole stop's budget) and a service's stop timeout instead (docs/migration-from-s6.md)"
}

remap_ids
join_device_groups
HUID=$(id -u hermes 2>/dev/null || echo 10000)
HGID=$(id -g hermes 2>/dev/null || echo 10000)
if ! mkdir -p "$HERMES_HOME" 2>/dev/null; then
	say "warning: cannot create $HERMES_HOME; mount a volume there"
	exit 0
fi
home_uid=$(stat -c %u "$HERMES_HOME" 2>/dev/null) || home_uid=
# --user with a uid that cannot write the volume (docker run --user
# $(id -u):$(id -g) on the image's volume): stage2 refused it with exit 1 and
# pointed to HERMES_UID/PUID; hinit runs it, and says here why hermes will
# fail to keep its state, and what does what --user was meant for.
if ! is_root && [ ! -w "$HERMES_HOME" ]; then
	asked=${HERMES_UID:-${PUID:-}}
	if [ -n "$asked" ]; then # the remap it asked for needs the root start --user took away
		say "warning: started with --user $(id -u):$(id -g), which cannot write $HERMES_HOME (owned by $(stat -c %u:%g "$HERMES_HOME")): hermes cannot keep its state; drop --user (start as root), and your HERMES_UID/PUID $asked applies"
	else
		say "warning: started with --user $(id -u):$(id -g), which cannot write $HERMES_HOME (owned by $(stat -c %u:%g "$HERMES_HOME")): hermes cannot keep its state; to have the volume's files owned by your uid, start as root (no --user) with -e HERMES_UID=$(id -u) -e HERMES_GID=$(id -g) (or PUID/PGID), or give the volume to $(id -u)"
	fi
fi
fix_ownership
follow_uid
real_home
failed_dirs=
for d in $SEED_DIRS; do seed_dir "$d"; done
[ -z "$failed_dirs" ] || say "warning: cannot create in $HERMES_HOME:$failed_dirs"
seed_file "$INSTALL_DIR/.env.example" .env
seed_file "$INSTALL_DIR/cli-config.yaml.example" config.yaml
seed_file "$INSTALL_DIR/docker/SOUL.md" SOUL.md
stale_stamp
api_key
secret_modes
python_steps
browser_path
legacy_s6
