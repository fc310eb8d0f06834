# shellcheck shell=bash
# Debian packages the project needs, installed when missing.
# Sourced by ./run; `deps_ensure GROUP...` installs (as root) or names what
# is missing (otherwise) and stops.

# build: compiling ncmpd and its tests (libjwt-dev and libssl-dev: bearer tokens
# on the REST API, lib/ncmp_jwt.c)
NCMP_DEBS_build=(cmake make gcc pkg-config librdkafka-dev libpq-dev libjson-c-dev
    libyang2-dev libcriterion-dev libcurl4-openssl-dev libmicrohttpd-dev libzip-dev
    libjwt-dev libssl-dev)
# services: PostgreSQL 15 and what fetches and runs the Kafka broker
NCMP_DEBS_services=(postgresql-15 openjdk-17-jre-headless maven curl)
# lint: the formatting check, the offline check of compose/ and the checks
# of the report generator (JSON) that ./run test runs
NCMP_DEBS_lint=(clang-format docker-compose jq)
# report: `./run bench all` and `./run report` (JSON, plots, the diagram)
NCMP_DEBS_report=(jq gnuplot-nox graphviz)
# chaos: `./run chaos` (its figures as JSON)
NCMP_DEBS_chaos=(jq)
# fuzz: `./run fuzz` (clang and its libFuzzer runtime; the plain fuzz drivers
# of ./run test need neither)
NCMP_DEBS_fuzz=(clang libclang-rt-dev)

_deps_apt_updated=0

# deps_missing GROUP...: print the packages of GROUPs that are not installed.
deps_missing() {
    local group pkg list
    for group in "$@"; do
        list="NCMP_DEBS_${group}[@]"
        for pkg in "${!list}"; do
            if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
                printf '%s\n' "$pkg"
            fi
        done
    done
}

deps_ensure() {
    local missing
    command -v dpkg-query >/dev/null || die "this script needs a Debian system (dpkg-query not found)"
    mapfile -t missing < <(deps_missing "$@" | sort -u)
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        die "missing Debian packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})"
    fi
    info "installing Debian packages: ${missing[*]}"
    if [ $_deps_apt_updated -eq 0 ]; then
        apt-get update -qq >&2 || die "apt-get update failed"
        _deps_apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
        die "apt-get install failed for: ${missing[*]}"
}
