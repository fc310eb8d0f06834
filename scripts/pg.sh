# shellcheck shell=bash
# A private PostgreSQL 15 cluster for one instance folder: created with
# initdb on first start, listening on 127.0.0.1:$NCMP_PG_PORT only (no unix
# socket), trust authentication (loopback only; it is a disposable cluster).
#
# initdb refuses to run as root, so as root the cluster belongs to Debian's
# `postgres` user. If that user cannot reach the instance folder (a clone
# under /root, say), the data lives under /var/tmp and the instance folder
# holds a symlink to it.

PG_USER_DB=ncmpd
# clusters that cannot live in their instance folder (see _pg_home)
PG_OUTSIDE_PREFIX=${PG_OUTSIDE_PREFIX:-/var/tmp/ncmpd-pg-}

pg_bindir() {
    local d
    for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
        [ -x "$d/initdb" ] && { printf '%s\n' "$d"; return 0; }
    done
    return 1
}

_pg_as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

pg_url() {
    printf 'postgresql://%s@127.0.0.1:%s/%s\n' "$PG_USER_DB" "$NCMP_PG_PORT" "$PG_USER_DB"
}

# The cluster's home: a folder its owner can write, holding data/ and
# pg.log. It is $NCMP_INSTANCE_DIR/pg, or, when Debian's postgres user
# cannot reach that, a folder under /var/tmp that $NCMP_INSTANCE_DIR/pg
# links to.
_pg_home() {
    local link="$NCMP_INSTANCE_DIR/pg" real
    mkdir -p "$NCMP_INSTANCE_DIR"
    if [ "$(id -u)" -ne 0 ]; then
        mkdir -p "$link"
        printf '%s\n' "$link"
        return
    fi
    if [ -L "$link" ]; then
        readlink -f "$link"
        return
    fi
    if [ -d "$link" ] || runuser -u postgres -- test -x "$NCMP_INSTANCE_DIR" 2>/dev/null; then
        mkdir -p "$link"
        chown postgres: "$link"
        chmod 700 "$link"
        if runuser -u postgres -- test -w "$link"; then
            printf '%s\n' "$link"
            return
        fi
        rmdir "$link" 2>/dev/null
    fi
    real=$PG_OUTSIDE_PREFIX$(printf '%s' "$NCMP_INSTANCE_DIR" | sha256sum | cut -c1-12)
    mkdir -p "$real"
    chown postgres: "$real"
    chmod 700 "$real"
    ln -sfn "$real" "$link"
    # whose it is (written after the link): pg_sweep removes it once that
    # instance no longer links to it
    printf '%s\n' "$NCMP_INSTANCE_DIR" >"$real/instance"
    printf '%s\n' "$real"
}

# pg_home_of DIR: where the cluster of instance folder DIR keeps its data
# (nothing when it has none).
pg_home_of() {
    [ -e "$1/pg" ] && readlink -f "$1/pg"
}

# pg_purge: remove the instance's cluster (stopped first), wherever its data
# lives; its server log is kept in the instance folder as pg.log.
pg_purge() {
    local home
    home=$(pg_home_of "$NCMP_INSTANCE_DIR") || return 0
    pg_stop
    if [ "$home" != "$NCMP_INSTANCE_DIR/pg" ] && [ -f "$home/pg.log" ]; then
        cp "$home/pg.log" "$NCMP_INSTANCE_DIR/pg.log" 2>/dev/null
    fi
    rm -rf "$home" "$NCMP_INSTANCE_DIR/pg"
}

# pg_sweep: remove clusters left outside their instance folders by
# instances that no longer exist (a deleted clone, a run killed with -9
# whose folder was then removed). A cluster whose instance folder still
# links to it is kept, running or not.
pg_sweep() {
    local d inst
    for d in "$PG_OUTSIDE_PREFIX"*; do
        [ -f "$d/instance" ] || continue
        inst=$(cat "$d/instance")
        [ "$(pg_home_of "$inst" 2>/dev/null)" = "$d" ] && continue
        if [ -f "$d/data/postmaster.pid" ] && kill -0 "$(head -n 1 "$d/data/postmaster.pid")" 2>/dev/null; then
            continue
        fi
        rm -rf "$d"
    done
}

pg_start() {
    local bindir home data log out pidfile="$NCMP_INSTANCE_DIR/pg.pid"
    bindir=$(pg_bindir) || die "PostgreSQL cannot start: no PostgreSQL server found (Debian package postgresql-15)"
    if pid_alive "$pidfile"; then
        info "PostgreSQL already running (pid $(cat "$pidfile")) on 127.0.0.1:$NCMP_PG_PORT"
        return 0
    fi
    port_in_use "$NCMP_PG_PORT" &&
        die "PostgreSQL cannot start: $(port_taken "$NCMP_PG_PORT") (set NCMP_PG_PORT to another port)"
    port_check_range "$NCMP_PG_PORT"
    if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
        die "PostgreSQL cannot start: running as root and Debian's 'postgres' user does not exist"
    fi
    home=$(_pg_home)
    data="$home/data"
    log="$home/pg.log"
    if [ ! -f "$data/PG_VERSION" ]; then
        info "creating PostgreSQL cluster in $data"
        _pg_as_owner "$bindir/initdb" -D "$data" -U "$PG_USER_DB" --auth=trust -E UTF8 --no-locale \
            >"$NCMP_INSTANCE_DIR/initdb.log" 2>&1 ||
            die "PostgreSQL cannot start: initdb failed: $(grep -m1 -iE 'error|fatal' "$NCMP_INSTANCE_DIR/initdb.log")"
        cat >>"$data/postgresql.conf" <<CONF
# ncmpd: private loopback cluster
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
max_connections = 200
shared_buffers = 512MB
wal_level = minimal
max_wal_senders = 0
max_wal_size = 4GB
checkpoint_timeout = 15min
CONF
    fi
    # The port lives on the command line so an instance can move ports.
    if ! out=$(_pg_as_owner "$bindir/pg_ctl" -D "$data" -l "$log" -o "-p $NCMP_PG_PORT" -w -t 60 start 2>&1); then
        die "PostgreSQL cannot start: $( (grep -hE 'FATAL|ERROR' "$log" 2>/dev/null || printf '%s\n' "$out") | tail -n 1)"
    fi
    head -n 1 "$data/postmaster.pid" >"$pidfile"
    if ! "$bindir/psql" -qAt -h 127.0.0.1 -p "$NCMP_PG_PORT" -U "$PG_USER_DB" -d postgres \
        -c "SELECT 1 FROM pg_database WHERE datname = '$PG_USER_DB'" | grep -q 1; then
        "$bindir/createdb" -h 127.0.0.1 -p "$NCMP_PG_PORT" -U "$PG_USER_DB" "$PG_USER_DB" ||
            die "PostgreSQL started but creating database $PG_USER_DB failed"
    fi
    info "PostgreSQL ready on 127.0.0.1:$NCMP_PG_PORT (pid $(cat "$pidfile"))"
}

pg_stop() {
    local bindir data pidfile="$NCMP_INSTANCE_DIR/pg.pid"
    [ -f "$pidfile" ] || return 0
    bindir=$(pg_bindir)
    data="$(readlink -f "$NCMP_INSTANCE_DIR/pg")/data"
    if pid_alive "$pidfile" && [ -n "$bindir" ] && [ -f "$data/postmaster.pid" ] &&
        [ "$(head -n 1 "$data/postmaster.pid")" = "$(cat "$pidfile")" ]; then
        _pg_as_owner "$bindir/pg_ctl" -D "$data" -m fast -w -t 60 stop >/dev/null 2>&1
    fi
    stop_pidfile "$pidfile" PostgreSQL
}

# pg_psql ARGS...: psql on the instance's database.
pg_psql() {
    "$(pg_bindir)/psql" -X -q -h 127.0.0.1 -p "$NCMP_PG_PORT" -U "$PG_USER_DB" -d "$PG_USER_DB" "$@"
}
