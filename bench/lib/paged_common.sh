# Shared by the bench/paged_*.sh programs (sourced, not run): a scratch directory removed on
# exit with the server the script started, and the server's peak RSS while a load runs.
#
#   paged_workdir NAME    sets $work (a new /tmp/onelog-NAME.XXXXXX) and $server (empty); the
#                         EXIT trap kills a started server ($server: its pid) and removes $work
#   peak_rss_while PID    prints the server's peak RSS in MiB, sampled every 200 ms while PID runs
#   paged_serve DIR BIN   starts a paged server (below)

paged_workdir() {
    work=$(mktemp -d "/tmp/onelog-$1.XXXXXX")
    server=
    trap paged_cleanup EXIT
}

paged_cleanup() {
    [[ -n $server ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$work"
}

peak_rss_while() {
    local peak=0 now
    while kill -0 "$1" 2>/dev/null; do
        now=$(($(ps -o rss= -p "$server" || echo 0) / 1024))
        ((now > peak)) && peak=$now
        sleep 0.2
    done
    echo "$peak"
}

# paged_serve DIR BIN: starts BIN on the paged store with data in DIR/data, log DIR/log, on
# 127.0.0.1:$PORT with --innodb-buffer-pool-size=$BUDGET, sets $server, and waits (at most
# 60 s) until the caller's `client` function can connect. Environment assignments before the
# call (LD_PRELOAD=...) reach the server.
paged_serve() {
    "$2" serve --datadir="$1/data" --port="$PORT" --bind-address=127.0.0.1 \
        --auth-root-authentication-method=normal --table-store=paged \
        --innodb-buffer-pool-size="$BUDGET" >"$1/log" 2>&1 &
    server=$!
    for _ in $(seq 120); do client -e 'select 1' >/dev/null 2>&1 && break; sleep 0.5; done
}
