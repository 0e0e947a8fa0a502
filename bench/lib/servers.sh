# Shared by bench programs that compare onelog with MariaDB on loopback (sourced, not run).
# The caller sets PORT and STATEMENT_TIMEOUT (and BUDGET for the paged store) and, for the
# EXIT trap, $server (bench/lib/paged_common.sh's paged_workdir does).
#
#   client ARGS...        the mariadb client as root on 127.0.0.1:$PORT, bounded in time
#   wait_ready            waits (at most 60 s) until the server answers, or exits 1
#   serve BIN STORE DIR   starts onelog BIN on STORE (memory or paged) with data in DIR/data,
#                         or MariaDB when BIN is "mariadb" (its defaults plus the binlog, a
#                         fresh datadir in DIR/data); log DIR/log; sets $server and waits

client() { timeout "$STATEMENT_TIMEOUT" mariadb -h127.0.0.1 -P"$PORT" -uroot "$@"; }

wait_ready() {
    for _ in $(seq 120); do client -e 'select 1' >/dev/null 2>&1 && return; sleep 0.5; done
    echo "the server on port $PORT did not answer within 60 s" >&2
    exit 1
}

serve() {
    local bin=$1 store=$2 dir=$3
    if [[ $bin == mariadb ]]; then
        mariadb-install-db --no-defaults --datadir="$dir/data" --user="$(id -un)" \
            --auth-root-authentication-method=normal >/dev/null
        mariadbd --no-defaults --datadir="$dir/data" --user="$(id -un)" --port="$PORT" \
            --bind-address=127.0.0.1 --socket="$dir/sock" --log-bin="$dir/data/binlog" \
            --server-id=1 >"$dir/log" 2>&1 &
    else
        local opts=(--table-store="$store")
        [[ $store == paged ]] && opts+=(--innodb-buffer-pool-size="$BUDGET")
        "$bin" serve --datadir="$dir/data" --port="$PORT" --bind-address=127.0.0.1 \
            --auth-root-authentication-method=normal "${opts[@]}" >"$dir/log" 2>&1 &
    fi
    server=$!
    wait_ready
}
