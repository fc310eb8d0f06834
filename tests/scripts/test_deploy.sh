#!/usr/bin/env bash
# Offline checks of the deployment files in compose/ (no Docker engine
# runs on the test machines): the compose file is valid and has the shape
# the docs promise, every NCMP_* variable it or the env example sets is a
# real option (names derived from `ncmpd config-doc`), the Dockerfile
# installs what the binaries link and what the build needs (derived from
# the binaries and scripts/deps.sh), and systemd accepts the unit.
# Runs inside ./run test after the build (the `scripts` suite).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${NCMP_BUILD_DIR:-$ROOT/build}
NCMPD=$BUILD/workers/ncmpd
COMPOSE=$ROOT/compose/docker-compose.yml
ENV_EXAMPLE=$ROOT/compose/ncmpd.env.example
UNIT=$ROOT/compose/ncmpd.service
DOCKERFILE=$ROOT/compose/Dockerfile
# shellcheck source=tests/scripts/check_lib.sh
. "$ROOT/tests/scripts/check_lib.sh"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The environment names of every option, from the generated reference.
option_env_names() {
    "$NCMPD" config-doc | sed -n 's/^| `[^`]*` | `\(NCMP_[A-Z0-9_]*\)` |.*/\1/p' | sort -u
}

# NCMP_* names used outside comments in FILE.
ncmp_names_in() {
    grep -v '^[[:space:]]*#' "$1" | grep -o 'NCMP_[A-Z0-9_]*' | sort -u
}

# unknown_names FILE: print the NCMP_* names in FILE that are no option.
unknown_names() {
    comm -23 <(ncmp_names_in "$1") "$scratch/options"
}

binary_built() {
    [ -x "$NCMPD" ] || { echo "no $NCMPD: build first (./run build)"; return 1; }
    option_env_names >"$scratch/options"
    # the reference lists far more than a handful of options
    [ "$(wc -l <"$scratch/options")" -gt 10 ] || { echo "config-doc listed no options"; return 1; }
}

compose_config_is_valid() {
    command -v docker-compose >/dev/null ||
        { echo "docker-compose is missing (Debian package docker-compose, group lint)"; return 1; }
    docker-compose -f "$COMPOSE" config -q || return 1
    docker-compose -f "$COMPOSE" config >"$scratch/compose.yml" 2>/dev/null
}

compose_sets_only_real_options() {
    local unknown
    unknown=$(unknown_names "$COMPOSE")
    [ -z "$unknown" ] || { echo "not options: $unknown"; return 1; }
    [ -n "$(ncmp_names_in "$COMPOSE")" ] || { echo "the compose file sets no NCMP_* variable"; return 1; }
}

env_example_sets_only_real_options() {
    local unknown
    unknown=$(unknown_names "$ENV_EXAMPLE")
    [ -z "$unknown" ] || { echo "not options: $unknown"; return 1; }
    # every line that is not a comment is NAME=value
    ! grep -v '^[[:space:]]*\(#.*\)\?$' "$ENV_EXAMPLE" | grep -qv '^NCMP_[A-Z0-9_]*=' ||
        { echo "a line is neither a comment nor NCMP_NAME=value"; return 1; }
}

# The check above must bite: a made-up name is reported.
option_check_finds_a_made_up_name() {
    printf 'services:\n  x:\n    environment:\n      NCMP_NO_SUCH_OPTION: "1"\n      NCMP_DB_URL: x\n' \
        >"$scratch/fake.yml"
    [ "$(unknown_names "$scratch/fake.yml")" = "NCMP_NO_SUCH_OPTION" ]
}

# The shape of the deployment, read from the normalised compose config.
compose_has_the_promised_shape() {
    local shutdown_default
    shutdown_default=$("$NCMPD" config-doc | sed -n 's/^| `shutdown-timeout-s` |[^|]*|[^|]*| `\([0-9]*\)` |.*/\1/p')
    python3 - "$scratch/compose.yml" "$shutdown_default" <<'PY'
import re, sys, yaml

cfg = yaml.safe_load(open(sys.argv[1]))
shutdown_default = int(sys.argv[2])
services = cfg["services"]
errors = []

def seconds(text):
    m = re.fullmatch(r"(?:(\d+)m)?(?:(\d+)s)?", str(text))
    return int(m.group(1) or 0) * 60 + int(m.group(2) or 0) if m else -1

def command(svc):
    c = svc.get("command") or []
    return c if isinstance(c, list) else c.split()

def env(svc):
    e = svc.get("environment") or {}
    if isinstance(e, list):
        e = dict(x.split("=", 1) for x in e)
    return e

def image(name):
    return services.get(name, {}).get("image", "")

if not image("kafka").startswith("apache/kafka:"):
    errors.append("kafka must use the official apache/kafka image")
if env(services.get("kafka", {})).get("KAFKA_PROCESS_ROLES") != "broker,controller":
    errors.append("kafka must be a single KRaft node (broker,controller)")
if not image("postgres").startswith("postgres:15"):
    errors.append("postgres must be PostgreSQL 15")

workers = {n: s for n, s in services.items() if command(s) == ["run"]}
if len(workers) < 2:
    errors.append("need at least two ncmpd services running `run`")
groups = {env(s).get("NCMP_KAFKA_GROUP_ID") for s in workers.values()}
if len(groups) != 1 or None in groups:
    errors.append("the ncmpd services must share one NCMP_KAFKA_GROUP_ID: %s" % groups)
ids = [env(s).get("NCMP_KAFKA_INSTANCE_ID") for s in workers.values()]
if None in ids or len(set(ids)) != len(ids):
    errors.append("each ncmpd service needs its own NCMP_KAFKA_INSTANCE_ID: %s" % ids)

oneshot = {tuple(command(s)): n for n, s in services.items() if s.get("restart") == "no"}
for cmd in (("migrate",), ("create-topics",)):
    if cmd not in oneshot:
        errors.append("no one-shot service runs `ncmpd %s`" % cmd[0])
for name, svc in workers.items():
    deps = svc.get("depends_on") or {}
    for cmd in (("migrate",), ("create-topics",)):
        dep = deps.get(oneshot.get(cmd, "?"), {}) if isinstance(deps, dict) else {}
        if dep.get("condition") != "service_completed_successfully":
            errors.append("%s must wait for `%s` to complete" % (name, cmd[0]))
    budget = int(env(svc).get("NCMP_SHUTDOWN_TIMEOUT_S", shutdown_default))
    if seconds(svc.get("stop_grace_period", "10s")) <= budget:
        errors.append("%s: stop_grace_period must exceed shutdown-timeout-s (%d s)" % (name, budget))
    if env(svc).get("NCMP_DB_MIGRATE_ON_START", "true") != "false":
        errors.append("%s: migrations belong to the one-shot service" % name)

published = [p for s in workers.values() for p in s.get("ports", [])]
if not any(str(p.get("target") if isinstance(p, dict) else p).endswith("8883") for p in published):
    errors.append("no ncmpd service publishes the REST port 8883")

stub = [n for n, s in services.items() if (s.get("entrypoint") or [""])[0] == "ncmp-dmi-stub"]
if not stub:
    errors.append("no DMI stub service (entrypoint ncmp-dmi-stub)")
for name in stub:
    s = services[name]
    if "--port" not in command(s) or command(s)[command(s).index("--port") + 1] != "8092":
        errors.append("the DMI stub must listen on 8092")
    for var in ("MODULE_REFERENCES_DELAY_MS", "MODULE_RESOURCES_DELAY_MS",
                "READ_DATA_FOR_CM_HANDLE_DELAY_MS", "WRITE_DATA_FOR_CM_HANDLE_DELAY_MS",
                "MODULE_INITIAL_PROCESSING_DELAY_MS"):
        if var not in env(s):
            errors.append("the DMI stub does not set %s" % var)

for name, svc in services.items():
    if svc.get("restart") != "no" and "healthcheck" not in svc:
        errors.append("%s runs for good but has no health check" % name)

for e in errors:
    print(e)
sys.exit(1 if errors else 0)
PY
}

# Packages a Dockerfile stage installs with apt-get (stage 1 or 2): the
# words after `apt-get install` up to the next `&&` or the end of the RUN.
dockerfile_packages() {
    awk -v want="$1" '
        /^FROM / { stage++ }
        stage != want { next }
        {
            for (i = 1; i <= NF; i++) {
                if ($i == "install" && $(i - 1) == "apt-get") { on = 1; continue }
                if ($i == "&&") on = 0
                if (on && $i ~ /^[a-z0-9][a-z0-9.+-]+$/) print $i
            }
            if ($0 !~ /\\$/) on = 0
        }' "$DOCKERFILE" | sort -u
}

dockerfile_builds_with_the_build_group() {
    local missing
    # shellcheck source=../../scripts/deps.sh
    NCMP_DEBS_build=()
    . "$ROOT/scripts/deps.sh"
    missing=$(comm -23 <(printf '%s\n' "${NCMP_DEBS_build[@]}" | grep -v criterion | sort -u) \
        <(dockerfile_packages 1))
    [ -z "$missing" ] || { echo "the build stage lacks: $missing"; return 1; }
}

# The Debian package that holds shared library NAME on this machine.
library_package() {
    local path pkg
    path=$(ldconfig -p | awk -v l="$1" '$1 == l { print $NF; exit }')
    [ -n "$path" ] || return 1
    path=$(readlink -f "$path")
    pkg=$(dpkg -S "$path" 2>/dev/null || dpkg -S "${path#/usr}" 2>/dev/null) || return 1
    printf '%s\n' "${pkg%%:*}"
}

dockerfile_runtime_has_every_linked_library() {
    local bin lib pkg runtime missing=""
    runtime=$(dockerfile_packages 2)
    for bin in "$NCMPD" $(find "$BUILD" -type f -name ncmp-dmi-stub -perm -u+x 2>/dev/null); do
        for lib in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
            pkg=$(library_package "$lib") || { echo "$lib: no Debian package found"; return 1; }
            case "$pkg" in libc6 | libgcc-s1) continue ;; esac # in every Debian image
            grep -qx "$pkg" <<<"$runtime" || missing="$missing $pkg($lib)"
        done
    done
    [ -z "$missing" ] || { echo "the runtime stage lacks:$missing"; return 1; }
}

dockerfile_runs_ncmpd_as_non_root() {
    grep -q '^ENTRYPOINT \["ncmpd"\]' "$DOCKERFILE" || { echo "ENTRYPOINT is not ncmpd"; return 1; }
    grep -q '^FROM debian:bookworm-slim' "$DOCKERFILE" || { echo "not run on bookworm-slim"; return 1; }
    local user
    user=$(sed -n 's/^USER \(.*\)/\1/p' "$DOCKERFILE" | tail -n 1)
    [ -n "$user" ] && [ "${user%%:*}" != root ] && [ "${user%%:*}" != 0 ] ||
        { echo "the image runs as root"; return 1; }
}

unit_stop_timeout_exceeds_shutdown_timeout() {
    local stop budget
    stop=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)s\{0,1\}$/\1/p' "$UNIT")
    budget=$(sed -n 's/^NCMP_SHUTDOWN_TIMEOUT_S=//p' "$ENV_EXAMPLE")
    [ -n "$stop" ] && [ -n "$budget" ] && [ "$stop" -gt "$budget" ] ||
        { echo "TimeoutStopSec=$stop must exceed NCMP_SHUTDOWN_TIMEOUT_S=$budget"; return 1; }
    grep -q '^EnvironmentFile=' "$UNIT" || { echo "no EnvironmentFile="; return 1; }
    grep -q '^User=ncmpd$' "$UNIT" || { echo "the unit does not run as ncmpd"; return 1; }
}

systemd_accepts_the_unit() {
    local out
    if ! command -v systemd-analyze >/dev/null; then
        echo "(systemd-analyze not installed: skipped)"
        return 0
    fi
    # verify wants the program to exist: point the copy at the build
    sed "s|^ExecStart=/usr/local/bin/ncmpd|ExecStart=$NCMPD|" "$UNIT" >"$scratch/ncmpd.service"
    out=$(systemd-analyze verify "$scratch/ncmpd.service" 2>&1) || { echo "$out"; return 1; }
    # verify exits 0 on settings it ignores: any message is a failure
    [ -z "$out" ] || { echo "$out"; return 1; }
}

check "ncmpd is built and lists its options" binary_built || {
    echo "deploy: $pass passed, $fail failed"
    exit 1
}
check "docker-compose config accepts the compose file" compose_config_is_valid
check "the compose file sets only real NCMP_* options" compose_sets_only_real_options
check "the env example sets only real NCMP_* options" env_example_sets_only_real_options
check "the option check reports a made-up name" option_check_finds_a_made_up_name
check "the compose file has the promised shape" compose_has_the_promised_shape
check "the Dockerfile builds with the build group of deps.sh" dockerfile_builds_with_the_build_group
check "the Dockerfile runtime has every linked library" dockerfile_runtime_has_every_linked_library
check "the image runs ncmpd as a non-root user" dockerfile_runs_ncmpd_as_non_root
check "the unit's stop timeout exceeds ncmpd's own" unit_stop_timeout_exceeds_shutdown_timeout
check "systemd-analyze verify accepts the unit" systemd_accepts_the_unit
check_summary "deploy"
