# shellcheck shell=bash
# Configure and build with CMake (Ninja when present).

# build_project release|asan|fuzz: build into build/, build-asan/ or build-fuzz/ and set
# NCMP_BIN to the folder of the programs.
build_project() {
    local kind=$1 dir gen=() opts=(-DNCMP_WERROR=ON) cc=${CC:-} target=()
    mkdir -p "$NCMP_LOCAL"
    if [ "$kind" = asan ]; then
        dir="$NCMP_ROOT/build-asan"
        opts+=(-DNCMP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug)
    elif [ "$kind" = fuzz ]; then
        # libFuzzer: clang, coverage everywhere, ASan+UBSan (./run fuzz)
        dir="$NCMP_ROOT/build-fuzz"
        opts+=(-DNCMP_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo)
        cc=clang
        target=(--target ncmp-fuzzers) # the libFuzzer programs alone
    else
        dir="$NCMP_BUILD_DIR"
    fi
    command -v ninja >/dev/null && gen=(-G Ninja)
    if [ ! -f "$dir/CMakeCache.txt" ]; then
        ${cc:+env CC=$cc} cmake -S "$NCMP_ROOT" -B "$dir" "${gen[@]}" "${opts[@]}" >"$NCMP_LOCAL/cmake-$kind.log" 2>&1 ||
            { mkdir -p "$NCMP_LOCAL"; cat "$NCMP_LOCAL/cmake-$kind.log" >&2; die "cmake configure failed"; }
    fi
    cmake --build "$dir" -j "$(nproc)" "${target[@]}" >"$NCMP_LOCAL/build-$kind.log" 2>&1 ||
        { grep -E 'error|warning' -A3 "$NCMP_LOCAL/build-$kind.log" | head -n 60 >&2; die "build failed (log: $NCMP_LOCAL/build-$kind.log)"; }
    NCMP_BIN="$dir"
}

format_sources() {
    local files
    deps_ensure lint
    mapfile -t files < <(cd "$NCMP_ROOT" && git ls-files --cached --others --exclude-standard \
        '*.c' '*.h' | grep -v '^build')
    if [ "${1:-}" = "--check" ]; then
        (cd "$NCMP_ROOT" && clang-format --dry-run -Werror "${files[@]}")
    else
        (cd "$NCMP_ROOT" && clang-format -i "${files[@]}")
    fi
}
