#!/bin/sh
# First-boot setup of the Hermes Agent image: hinit's boot hook
# "hermes-setup" (docker/hinit.yaml), installed as /etc/hinit/hermes-setup.sh.
# It replaces stage2-hook.sh of the s6-overlay image.
#
# hinit runs it as root (as the container's user under --user), with the
# container environment, after the runtime dirs are made and before the
# gateways are reconciled, so no process of the hermes user runs yet: what
# is checked here cannot change before it is acted on. Nothing inside
# $HERMES_HOME is followed through a symlink.
#
# It only warns about what it cannot do (a volume it may not write, an
# absent tool); it exits non-zero only on a bug, which stops the container.
set -eu

HERMES_HOME="${HERMES_HOME:-/opt/data}"
INSTALL_DIR="${HERMES_INSTALL_DIR:-/opt/hermes}"
# Dirs hermes expects in its home; created as hermes.
SEED_DIRS="backups cron sessions logs logs/gateways hooks memories skills skins plans workspace home profiles pairing platforms platforms/pairing"
# Dirs given back to hermes, recursively, when something in them is not
# hermes' (a volume written by root, a restored backup). Never the whole
# volume: it may hold files that must stay someone else's.
OWNED_DIRS="cron sessions logs hooks memories skills skins plans workspace home profiles pairing platforms"

# With a terminal, the terminal belongs to main (hermes --tui): lines go to
# hinit's own log file instead, as hinit's do.
if [ -t 2 ]; then
	exec 2>>"${HINIT_RUNTIME_DIR:-/run/hinit}/hinit.log" || exec 2>/dev/null
fi
exec 1>&2

say() { echo "[hermes-setup] $*"; }
is_root() { [ "$(id -u)" = 0 ]; }

HUID=$(id -u hermes 2>/dev/null || echo 10000)
HGID=$(id -g hermes 2>/dev/null || echo 10000)

# no_link PATH: succeeds when no component of PATH below $HERMES_HOME is a
# symlink; warns and fails otherwise.
no_link() {
	p=$HERMES_HOME
	for part in $(echo "${1#"$HERMES_HOME"}" | tr '/' ' '); do
		p=$p/$part
		if [ -L "$p" ]; then
			say "warning: refusing to go through symlink $p"
			return 1
		fi
	done
}

# own PATH: gives PATH (not what it points to) to hermes when root.
own() {
	if is_root; then chown -h "$HUID:$HGID" "$1"; fi
}

# seed_dir REL: creates $HERMES_HOME/REL as hermes' when missing.
seed_dir() {
	d=$HERMES_HOME/$1
	no_link "$d" || return 0
	[ -d "$d" ] && return 0
	{ mkdir "$d" 2>/dev/null && own "$d"; } || say "warning: cannot create $d"
}

# seed_file SRC REL: copies SRC to $HERMES_HOME/REL, as hermes', when SRC
# exists and REL does not.
seed_file() {
	d=$HERMES_HOME/$2
	[ -f "$1" ] || return 0
	no_link "$d" || return 0
	[ -e "$d" ] && return 0
	{ cp "$1" "$d" 2>/dev/null && own "$d"; } || say "warning: cannot seed $d"
}

# fix_ownership: as root, gives $HERMES_HOME, its top-level files and the
# OWNED_DIRS back to hermes where someone else owns them.
fix_ownership() {
	is_root || return 0
	[ "$(stat -c %u:%g "$HERMES_HOME")" = "$HUID:$HGID" ] || chown "$HUID:$HGID" "$HERMES_HOME"
	find "$HERMES_HOME" -maxdepth 1 -type f \( ! -user "$HUID" -o ! -group "$HGID" \) \
		-exec chown -h "$HUID:$HGID" {} \;
	for d in $OWNED_DIRS; do
		p=$HERMES_HOME/$d
		[ -d "$p" ] || continue
		no_link "$p" || continue
		if [ -n "$(find "$p" \( ! -user "$HUID" -o ! -group "$HGID" \) | head -n 1)" ]; then
			say "giving $p back to hermes ($HUID:$HGID)"
			chown -hR "$HUID:$HGID" "$p"
		fi
	done
}

# api_key: the gateway's API server needs a key; one is generated once.
api_key() {
	env_file=$HERMES_HOME/.env
	[ -f "$env_file" ] && [ ! -L "$env_file" ] || return 0
	grep -q '^API_SERVER_KEY=' "$env_file" && return 0
	key=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
	echo "API_SERVER_KEY=$key" >>"$env_file"
	chmod 600 "$env_file"
	say "generated API_SERVER_KEY in $env_file"
}

# as_hermes CMD...: runs CMD as hermes (setpriv of util-linux when root).
as_hermes() {
	if ! is_root; then
		"$@"
	elif setpriv --help 2>&1 | grep -q -- --reuid; then
		HOME=$HERMES_HOME setpriv --reuid="$HUID" --regid="$HGID" --init-groups -- "$@"
	else
		say "warning: no setpriv --reuid here; skipped: $*"
	fi
}

# python_steps: config migration and skills sync of the real image, as
# hermes; a failure is a warning, as in the s6 image.
python_steps() {
	py=$INSTALL_DIR/.venv/bin/python
	[ -x "$py" ] || return 0
	if [ "${HERMES_SKIP_CONFIG_MIGRATION:-}" != 1 ] && [ -f "$INSTALL_DIR/scripts/docker_config_migrate.py" ]; then
		as_hermes "$py" "$INSTALL_DIR/scripts/docker_config_migrate.py" || say "warning: config migration failed"
	fi
	if [ -f "$INSTALL_DIR/tools/skills_sync.py" ]; then
		as_hermes "$py" "$INSTALL_DIR/tools/skills_sync.py" || say "warning: skills sync failed"
	fi
}

if ! mkdir -p "$HERMES_HOME" 2>/dev/null; then
	say "warning: cannot create $HERMES_HOME; mount a volume there"
	exit 0
fi
fix_ownership
for d in $SEED_DIRS; do seed_dir "$d"; done
seed_file "$INSTALL_DIR/.env.example" .env
seed_file "$INSTALL_DIR/cli-config.yaml.example" config.yaml
seed_file "$INSTALL_DIR/docker/SOUL.md" SOUL.md
api_key
python_steps
