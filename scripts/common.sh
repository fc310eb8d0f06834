# shellcheck shell=bash
# Shared helpers for the project's scripts. Sourced, never run.
#
# Every service the scripts start lives under one *instance* folder
# ($NCMP_INSTANCE_DIR, default .local/up): its data, its logs and the pid
# files that `down` uses to stop exactly what was started. `./run test`
# uses its own instance (.local/test) on other ports, so a system brought
# up by hand keeps running while the tests do.

NCMP_ROOT=${NCMP_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
NCMP_LOCAL=${NCMP_LOCAL:-$NCMP_ROOT/.local}
NCMP_INSTANCE_DIR=${NCMP_INSTANCE_DIR:-$NCMP_LOCAL/up}
NCMP_PG_PORT=${NCMP_PG_PORT:-25432}
NCMP_BROKER_PORT=${NCMP_BROKER_PORT:-29092}
NCMP_BROKER_CONTROLLER_PORT=${NCMP_BROKER_CONTROLLER_PORT:-29093}
NCMP_HTTP_PORT=${NCMP_HTTP_PORT:-8883}
NCMP_BUILD_DIR=${NCMP_BUILD_DIR:-$NCMP_ROOT/build}

# The Kafka broker's jars, fetched once by Maven and shared by all instances.
NCMP_BROKER_JARS=${NCMP_BROKER_JARS:-$NCMP_LOCAL/kafka-jars}

# Colour only on a terminal.
if [ -t 2 ]; then
    _c_red=$'\e[31m' _c_grn=$'\e[32m' _c_dim=$'\e[2m' _c_off=$'\e[0m'
else
    _c_red='' _c_grn='' _c_dim='' _c_off=''
fi

say() { printf '%s\n' "$*" >&2; }
info() { printf '%s==>%s %s\n' "$_c_grn" "$_c_off" "$*" >&2; }
die() {
    printf '%serror:%s %s\n' "$_c_red" "$_c_off" "$*" >&2
    exit 1
}

# port_in_use PORT: true when something listens on 127.0.0.1:PORT.
port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# port_taken PORT: "port N is taken", with the process holding it when
# ss can tell (it can for processes of this user, or for all as root).
port_taken() {
    local who
    who=$(ss -Hltnp "sport = :$1" 2>/dev/null |
        sed -n 's/.*users:(("\([^"]*\)",pid=\([0-9]*\).*/\1, pid \2/p' | head -n 1)
    printf 'port %s is taken%s' "$1" "${who:+ by $who}"
}

# port_check_range PORT...: a warning for each PORT inside the kernel's
# ephemeral range, where this machine's own outgoing connections (Kafka
# clients open many) may hold it at any moment. The defaults lie below it.
port_check_range() {
    local lo hi p
    read -r lo hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || return 0
    for p in "$@"; do
        if [ "$p" -ge "$lo" ] && [ "$p" -le "$hi" ]; then
            say "warning: port $p lies in the ephemeral range $lo-$hi; an outgoing connection may take it"
        fi
    done
}

# wait_port PORT SECONDS PIDFILE: wait until PORT accepts connections, or
# fail early if the process behind PIDFILE died.
wait_port() {
    local port=$1 secs=$2 pidfile=$3 i
    for ((i = 0; i < secs * 10; i++)); do
        port_in_use "$port" && return 0
        if [ -n "$pidfile" ] && ! pid_alive "$pidfile"; then
            return 2
        fi
        sleep 0.1
    done
    return 1
}

# pid_alive PIDFILE: true when the pid in PIDFILE is a live process.
pid_alive() {
    local pid
    [ -f "$1" ] || return 1
    pid=$(cat "$1" 2>/dev/null) || return 1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# stop_pidfile PIDFILE NAME [SECONDS]: SIGTERM the process, wait, then
# SIGKILL; removes the pid file. Stops only the pid that was recorded.
stop_pidfile() {
    local pidfile=$1 name=$2 secs=${3:-30} pid i
    [ -f "$pidfile" ] || return 0
    pid=$(cat "$pidfile")
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null
        for ((i = 0; i < secs * 10; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            say "$name (pid $pid) did not stop in ${secs}s; killing it"
            kill -KILL "$pid" 2>/dev/null
            sleep 0.2
        fi
    fi
    rm -f "$pidfile"
}
