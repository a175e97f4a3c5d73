#!/usr/bin/env bash
# A throwaway PostgreSQL server for the checkpoint-postgres tests.
#
#   scripts/pg-test-server.sh start [DIR]   # prints the connection URL on stdout
#   scripts/pg-test-server.sh stop  [DIR]   # stops the server and removes DIR
#   scripts/pg-test-server.sh status [DIR]  # exit 0 when the server answers
#
# `start` creates a fresh cluster in DIR (a new temporary directory when omitted), listening
# on 127.0.0.1 only, on a free port, with its unix socket inside DIR, trust authentication,
# and waits until pg_isready answers (PG_TEST_TIMEOUT seconds, default 60). The URL is the
# only thing written to stdout; progress and errors go to stderr. `stop` without DIR stops
# the server the last `start` without DIR made (recorded in $PG_TEST_STATE, default
# /tmp/checkpoint-pg-test-server.state).
#
# The server binaries are Debian's (/usr/lib/postgresql/*/bin, the newest version, or
# $PG_BIN). When none is installed and we are root, `apt-get install -y postgresql` is run
# first. initdb refuses to run as root, so as root the cluster belongs to the `postgres`
# OS user and every server command runs through `runuser -u postgres --`.
#
# Usage in a shell:
#   export CHECKPOINT_POSTGRES_URL="$(scripts/pg-test-server.sh start)"
#   cargo test -p checkpoint-postgres
#   scripts/pg-test-server.sh stop
set -euo pipefail

STATE_FILE="${PG_TEST_STATE:-/tmp/checkpoint-pg-test-server.state}"
TIMEOUT="${PG_TEST_TIMEOUT:-60}"

log() { echo "pg-test-server: $*" >&2; }
die() {
    log "error: $*"
    exit 1
}

find_bin() {
    if [[ -n "${PG_BIN:-}" ]]; then
        [[ -x "$PG_BIN/initdb" ]] || die "PG_BIN=$PG_BIN has no executable initdb"
        echo "$PG_BIN"
        return
    fi
    local dir
    dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    if [[ -z "$dir" || ! -x "$dir/initdb" ]]; then
        if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
            log "no PostgreSQL server binaries found; installing Debian's postgresql package"
            # -qq keeps stdout free for the URL.
            DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 ||
                die "apt-get update failed"
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2 ||
                die "apt-get install postgresql failed"
            dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
        fi
    fi
    [[ -n "$dir" && -x "$dir/initdb" ]] ||
        die "no PostgreSQL server binaries in /usr/lib/postgresql/*/bin; install them with 'apt-get update && apt-get install -y postgresql' or set PG_BIN"
    echo "$dir"
}

# Runs a command as the cluster's owner: `postgres` when we are root, else ourselves.
as_owner() {
    if [[ "$(id -u)" == 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

pick_port() {
    local port i
    for i in $(seq 1 200); do
        port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        if ! port_in_use "$port"; then
            echo "$port"
            return
        fi
    done
    die "found no free port on 127.0.0.1"
}

cmd_start() {
    local dir="${1:-}" record=0
    local bin
    bin="$(find_bin)"
    if [[ -z "$dir" ]]; then
        dir="$(mktemp -d /tmp/checkpoint-pg.XXXXXX)"
        record=1
    else
        [[ -e "$dir/data" ]] && die "$dir/data already exists; stop that server first or choose another DIR"
        mkdir -p "$dir"
    fi
    dir="$(cd "$dir" && pwd)"
    mkdir -p "$dir/sock"
    if [[ "$(id -u)" == 0 ]]; then
        id postgres >/dev/null 2>&1 || die "the 'postgres' OS user does not exist (install the postgresql package)"
        chown -R postgres: "$dir"
        chmod 0700 "$dir"
        # The cluster belongs to `postgres`, which must reach DIR through its parents.
        runuser -u postgres -- test -w "$dir" ||
            die "the 'postgres' OS user cannot reach $dir (as root the cluster belongs to it): let it through the directories above (chmod o+x), or use another TMPDIR"
    fi

    log "creating a cluster in $dir/data with $bin/initdb"
    if ! as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C \
        --no-sync >"$dir/initdb.log" 2>&1; then
        cat "$dir/initdb.log" >&2
        die "initdb failed (log above)"
    fi

    local port attempt started=0
    for attempt in 1 2 3 4 5; do
        port="$(pick_port)"
        log "starting the server on 127.0.0.1:$port (attempt $attempt)"
        if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t "$TIMEOUT" \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $dir/sock -c max_connections=200" \
            start >/dev/null 2>&1; then
            started=1
            break
        fi
        if grep -q "could not bind\|already in use" "$dir/server.log" 2>/dev/null; then
            log "port $port was taken; trying another"
            continue
        fi
        tail -n 30 "$dir/server.log" >&2 || true
        die "pg_ctl start failed (server log above, full log in $dir/server.log)"
    done
    [[ "$started" == 1 ]] || die "could not start the server after 5 attempts (log: $dir/server.log)"

    local waited=0
    until "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres; do
        if ((waited >= TIMEOUT)); then
            tail -n 30 "$dir/server.log" >&2 || true
            die "the server on 127.0.0.1:$port was not ready after ${TIMEOUT}s (log: $dir/server.log)"
        fi
        sleep 1
        waited=$((waited + 1))
    done

    local url="postgresql://postgres@127.0.0.1:$port/postgres"
    echo "$url" >"$dir/url"
    echo "$bin" >"$dir/bin"
    if [[ "$record" == 1 ]]; then
        echo "$dir" >"$STATE_FILE"
    fi
    if [[ "$record" == 1 ]]; then
        log "ready: $url (stop it with: $0 stop)"
    else
        log "ready: $url (stop it with: $0 stop $dir)"
    fi
    echo "$url"
}

resolve_dir() {
    local dir="${1:-}"
    if [[ -z "$dir" ]]; then
        [[ -f "$STATE_FILE" ]] || die "no DIR given and no recorded server in $STATE_FILE"
        dir="$(cat "$STATE_FILE")"
    fi
    echo "$dir"
}

cmd_stop() {
    local given="${1:-}" dir
    dir="$(resolve_dir "$given")"
    if [[ ! -d "$dir" ]]; then
        log "$dir does not exist; nothing to stop"
        [[ -z "$given" ]] && rm -f "$STATE_FILE"
        return 0
    fi
    local bin
    bin="$(cat "$dir/bin" 2>/dev/null || find_bin)"
    if [[ -f "$dir/data/postmaster.pid" ]]; then
        log "stopping the server in $dir/data"
        if ! as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t "$TIMEOUT" stop >/dev/null 2>&1; then
            log "pg_ctl stop failed; sending SIGKILL to the postmaster"
            local pid
            pid="$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null || true)"
            [[ -n "$pid" ]] && kill -9 "$pid" 2>/dev/null || true
            sleep 1
        fi
    fi
    rm -rf "$dir"
    [[ -z "$given" ]] && rm -f "$STATE_FILE"
    log "stopped and removed $dir"
}

cmd_status() {
    local dir bin port
    dir="$(resolve_dir "${1:-}")"
    [[ -f "$dir/url" ]] || die "no server recorded in $dir"
    bin="$(cat "$dir/bin")"
    port="$(sed -E 's#.*:([0-9]+)/.*#\1#' "$dir/url")"
    "$bin/pg_isready" -h 127.0.0.1 -p "$port" >&2
    cat "$dir/url"
}

case "${1:-}" in
start) cmd_start "${2:-}" ;;
stop) cmd_stop "${2:-}" ;;
status) cmd_status "${2:-}" ;;
*)
    echo "usage: $0 start|stop|status [DIR]" >&2
    exit 2
    ;;
esac
