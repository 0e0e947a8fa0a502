#!/usr/bin/env bash
# MariaDB's own test suite (mysql-test, suite `main`) as a yardstick for onelog (issue 16,
# part 8). A program that prints a table, not a gate: it exits 0 whatever the tests do.
#
#   scripts/mtr.sh                       # the tests in scripts/mtr/tests.txt on MariaDB, then onelog
#   scripts/mtr.sh main.insert main.case # just these tests
#   scripts/mtr.sh --select              # run scripts/mtr/candidates.txt on MariaDB only and
#                                        # rewrite scripts/mtr/tests.txt with those that pass
#
# Settings (environment): ONELOG_BIN (default ${CARGO_TARGET_DIR:-target}/release/onelog,
# built with `cargo build --release -p onelog --bin onelog` when missing), PORT_BASE (24306:
# MariaDB listens on PORT_BASE, onelog on PORT_BASE+1, both on 127.0.0.1), TEST_TIMEOUT
# (seconds per test, 120), ONLY (mariadb|onelog: run one server), KEEP=1 (keep the work
# directory with every test's output), MTR_DIR (/usr/share/mysql/mysql-test).
# Needs the Debian packages mariadb-server (mariadbd 10.11), mariadb-client and mariadb-test
# (the test files and the `mariadb-test` client); installs them with apt-get when missing and
# running as root. No network beyond that.
#
# How a test runs. `mariadb-test-run.pl --extern` cannot drive onelog: before any test it runs
# `use mysql; SHOW VARIABLES` and gives up when that fails, and it calls the `mtr` schema's
# stored procedures around every test (check-testcase, check-warnings). So this script does
# what the harness does for one test itself, for both servers alike:
#  1. each server gets a work directory laid out as the harness lays out its vardir
#     (var/mysqld.1/data is the datadir, var/tmp, var/log), a my.cnf with a [client] group,
#     and the environment variables tests read (MYSQL_TEST_DIR, MYSQLTEST_VARDIR,
#     MYSQL_TMP_DIR, MASTER_MYPORT, MASTER_MYSOCK, MYSQL, MYSQL_DUMP, ...);
#  2. MariaDB starts with the options of the harness's include/default_mysqld.cnf that change
#     results (latin1 server character set, MyISAM default engine, small heap tables, ...),
#     without a binlog (the harness's default: tests that need one skip), its anonymous
#     accounts and test database removed as the harness's bootstrap does; onelog starts with
#     its defaults (it has no such options: utf8mb4, InnoDB-like tables, its log is a binlog);
#     each gets a copy of std_data in its vardir (tests load files from ../../std_data);
#  3. the harness's own `mtr` schema is loaded from include/mtr_warnings.sql and
#     include/mtr_check.sql (tables, triggers, procedures; `mtr.add_suppression` is what tests
#     call), and the sample time zones of mysql_test_data_timezone.sql into `mysql`;
#     statements a server refuses are counted and shown, not fatal;
#  4. before each test, databases other than information_schema, mysql, performance_schema,
#     sys and mtr are dropped and `test` is created again (what check-testcase would demand),
#     then `mariadb-test` runs the .test file against the server with --result-file set to a
#     copy of its .result file (so .reject files land in the work directory), bounded by
#     TEST_TIMEOUT. Exit status 0 = pass, 62 = skipped (the test's own --skip), else fail; the
#     first cause is the first `mysqltest: At line N: ...` error or the first differing line
#     of the result diff. A server that exits during a test is started again on a fresh
#     data directory for the next one.
# The harness's check-testcase and check-warnings steps (server state and error log compared
# around each test) are not run: a test here passes when its output equals its .result file.
# Accounts and global variables a failing test leaves behind are not reset.
# The counts and the causes of onelog's failures are in docs/SQL.md, "MariaDB's test suite
# (mtr) as a yardstick". A whole run takes about 15-25 minutes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

MTR_DIR=${MTR_DIR:-/usr/share/mysql/mysql-test}
MTR_SHAREDIR=$(dirname "$MTR_DIR")
PORT_BASE=${PORT_BASE:-24306}
TEST_TIMEOUT=${TEST_TIMEOUT:-120}
ONLY=${ONLY:-}
KEEP=${KEEP:-}
LIST=$REPO/scripts/mtr/tests.txt
CANDIDATES=$REPO/scripts/mtr/candidates.txt
SELECT=
TESTS=()
while (($#)); do
    case $1 in
        --select) SELECT=1 ONLY=mariadb ;;
        --help | -h)
            sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
            exit 0
            ;;
        -*) echo "scripts/mtr.sh: unknown option $1 (try --help)" >&2; exit 1 ;;
        *) TESTS+=("$1") ;;
    esac
    shift
done

export PATH="$PATH:/usr/sbin:/usr/local/sbin"
need=()
command -v mariadbd >/dev/null || need+=(mariadb-server)
command -v mariadb >/dev/null || need+=(mariadb-client)
{ command -v mariadb-test >/dev/null && [[ -d $MTR_DIR/main ]]; } || need+=(mariadb-test)
if ((${#need[@]})); then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${need[@]}"
        if command -v service >/dev/null; then service mariadb stop >/dev/null 2>&1 || true; fi
    else
        echo "scripts/mtr.sh: missing ${need[*]} (apt-get install -y ${need[*]})" >&2
        exit 1
    fi
fi

if ((${#TESTS[@]} == 0)); then
    list=$LIST
    if [[ -n $SELECT ]]; then list=$CANDIDATES; fi
    mapfile -t TESTS < <(sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$list")
fi

if [[ $ONLY != mariadb && -z ${ONELOG_BIN:-} ]]; then
    ONELOG_BIN=${CARGO_TARGET_DIR:-target}/release/onelog
    [[ -x $ONELOG_BIN ]] || cargo build --release -p onelog --bin onelog >&2
fi
[[ -z ${ONELOG_BIN:-} ]] || ONELOG_BIN=$(realpath "$ONELOG_BIN")

WORK=$(mktemp -d /tmp/onelog-mtr.XXXXXX)
SERVER_PID=
cleanup() {
    if [[ -n $SERVER_PID ]]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [[ -n $KEEP ]]; then echo "work directory kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# mariadb client on a server's socket, as root without a password.
sql() { # name [mariadb options...]
    local name=$1
    shift
    mariadb --no-defaults -uroot -S "$WORK/$name/sock" --connect-timeout=10 "$@"
}

wait_ready() { # name
    for _ in $(seq 1 600); do
        if sql "$1" -e "SELECT 1" >/dev/null 2>&1; then return 0; fi
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
        sleep 0.1
    done
    echo "scripts/mtr.sh: $1 did not come up; its log:" >&2
    tail -20 "$WORK/$1/server.log" >&2
    return 1
}

stop_server() {
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
}

# The harness's vardir layout for one server: var/mysqld.1/data, var/tmp, var/log.
make_vardir() { # name
    local d=$WORK/$1
    mkdir -p "$d/var/mysqld.1" "$d/var/tmp" "$d/var/log" "$d/results"
    # Tests read ../../std_data/ from the datadir, inside secure_file_priv (the vardir).
    [[ -d $d/var/std_data ]] || cp -r "$MTR_DIR/std_data" "$d/var/std_data"
}

start_mariadb() { # port
    local d=$WORK/mariadb
    make_vardir mariadb
    mariadb-install-db --no-defaults --datadir="$d/var/mysqld.1/data" --user="$(id -un)" \
        --auth-root-authentication-method=normal --skip-test-db >"$d/install.log" 2>&1
    # The options of the harness's include/default_mysqld.cnf that show in results.
    mariadbd --no-defaults --datadir="$d/var/mysqld.1/data" --socket="$d/sock" --port="$1" \
        --bind-address=127.0.0.1 --user="$(id -un)" --character-set-server=latin1 \
        --default-storage-engine=myisam --local-infile --max-heap-table-size=1M \
        --sort-buffer-size=256K --key-buffer-size=1M --log-bin-trust-function-creators=1 \
        --use-stat-tables=preferably --histogram-type=json_hb --secure-file-priv="$d/var" \
        --connect-timeout=60 --open-files-limit=1024 --innodb-buffer-pool-size=8M \
        --binlog-direct-non-transactional-updates >"$d/server.log" 2>&1 &
    SERVER_PID=$!
    wait_ready mariadb
    # The harness's bootstrap removes the anonymous accounts mariadb-install-db makes.
    sql mariadb -e "DELETE FROM mysql.global_priv WHERE user = ''; FLUSH PRIVILEGES"
}

start_onelog() { # port
    local d=$WORK/onelog
    make_vardir onelog
    # root over the socket and TCP without a password, as mariadb-install-db's
    # --auth-root-authentication-method=normal gives MariaDB above.
    "$ONELOG_BIN" serve --datadir="$d/var/mysqld.1/data" --socket="$d/sock" --port="$1" \
        --bind-address=127.0.0.1 --auth-root-authentication-method=normal \
        --tmpdir="$d/var/tmp" >"$d/server.log" 2>&1 &
    SERVER_PID=$!
    wait_ready onelog
}

# The harness's `mtr` schema, loaded with the mariadb client (its files use mysqltest's
# `delimiter ||;` and `--` comments, rewritten here); prints how many statements failed.
load_mtr_schema() { # name
    local d=$WORK/$1 f
    sql "$1" -e "CREATE DATABASE IF NOT EXISTS mtr CHARACTER SET latin1" 2>>"$d/mtr_schema.err" ||
        sql "$1" -e "CREATE DATABASE IF NOT EXISTS mtr" 2>>"$d/mtr_schema.err" || true
    for f in mtr_warnings mtr_check; do
        sed -e '/^[[:space:]]*--/d' -e 's/^delimiter \(.*\);$/delimiter \1/' \
            -e 's/^delimiter ;||$/delimiter ;/' "$MTR_DIR/include/$f.sql" |
            sql "$1" --force mtr 2>>"$d/mtr_schema.err" >/dev/null || true
    done
    # The harness's bootstrap also loads this sample of time zones (Europe/Moscow, MET, ...).
    sql "$1" --force mysql <"$MTR_SHAREDIR/mysql_test_data_timezone.sql" \
        2>>"$d/mtr_schema.err" >/dev/null || true
    grep -c '^ERROR' "$d/mtr_schema.err" || true
}

# The [client] group the harness writes for --extern, and its environment for tests.
setup_env() { # name port
    local d=$WORK/$1
    cat >"$d/my.cnf" <<EOF
[client]
user= root
password=
port= $2
socket= $d/sock
host= localhost

[mysql]
default-character-set=latin1

[mysqldump]
default-character-set=latin1
EOF
    export MYSQL_TEST_DIR=$MTR_DIR MYSQLTEST_VARDIR=$d/var MYSQL_TMP_DIR=$d/var/tmp
    export MASTER_MYPORT=$2 MASTER_MYSOCK=$d/sock MYSQL_CHARSETSDIR=/usr/share/mysql/charsets
    export MYSQL_SHAREDIR=/usr/share/mysql MYSQL_BINDIR=/usr/bin SECURE_LOAD_PATH=$MTR_DIR/std_data
    export MYSQL="mariadb --defaults-file=$d/my.cnf"
    export MYSQL_DUMP="mariadb-dump --defaults-file=$d/my.cnf"
    export MYSQL_BINLOG="mariadb-binlog --no-defaults"
    export MYSQL_TEST="mariadb-test --defaults-file=$d/my.cnf --silent --tmpdir=$d/var/tmp"
    export MTR_SUITE_DIR=$MTR_DIR/main USE_RUNNING_SERVER=1
}

# Drops what earlier tests left and creates `test` again.
reset_databases() { # name
    local db
    sql "$1" -N -e "SHOW DATABASES" 2>/dev/null | while read -r db; do
        case $db in
            information_schema | mysql | performance_schema | sys | mtr) ;;
            *) sql "$1" -e "DROP DATABASE \`$db\`" </dev/null >/dev/null 2>&1 || true ;;
        esac
    done
    sql "$1" -e "CREATE DATABASE test" >/dev/null 2>&1 || true
}

# First cause of a failure from mariadb-test's output, on one line: the include file it
# happened in (if any) and mysqltest's error, its query cut to 80 characters; or, for a
# result mismatch, the first line the diff removes (expected) and the first it adds (got).
first_cause() { # output-file
    local out=$1 block where want got
    block=$(awk '/^mysqltest: /{on=1} on && (/^$/ || /^The result from/){exit} on' "$out" |
        tr '\n' ' ')
    if [[ -n $block && $block != *"Result length mismatch"* && $block != *"Result content mismatch"* ]]; then
        where=
        if [[ $block =~ In\ included\ file\ \"[^\"]*/([^\"/]+)\" ]]; then
            where="${BASH_REMATCH[1]}: "
        fi
        block=${block#*At line }
        block="At line $block"
        if [[ $block =~ ^(At\ line\ [0-9]+:\ query\ \'.{0,80}).*(\'\ (failed|succeeded).*)$ ]]; then
            block="${BASH_REMATCH[1]}...${BASH_REMATCH[2]}"
        fi
        echo "$where${block%% }"
        return
    fi
    want=$(grep -m1 -E '^-([^-]|$)' "$out" || true)
    got=$(grep -m1 -E '^\+([^+]|$)' "$out" || true)
    if [[ -n $want$got ]]; then
        echo "diff: want '${want#-}' got '${got#+}'"
    else
        grep -m1 -v '^$' "$out" || echo "no output"
    fi
}

declare -A RESULT CAUSE MTR_SCHEMA_ERRORS
run_tests() { # name port
    local name=$1 port=$2 d=$WORK/$1 t base out rc status
    for t in "${TESTS[@]}"; do
        base=${t#main.}
        out=$d/results/$base.out
        if [[ ! -f $MTR_DIR/main/$base.test ]]; then
            RESULT[$name,$t]=missing
            continue
        fi
        reset_databases "$name"
        cp "$MTR_DIR/main/$base.result" "$d/results/$base.result" 2>/dev/null || true
        rc=0
        (cd "$MTR_DIR" && timeout -k 5 "$TEST_TIMEOUT" mariadb-test \
            --defaults-file="$d/my.cnf" --silent --tmpdir="$d/var/tmp" \
            --logdir="$d/var/log" --database=test --basedir="$MTR_DIR/" \
            --suite-dir="$MTR_DIR/main/" --test-file="$MTR_DIR/main/$base.test" \
            --result-file="$d/results/$base.result" --tail-lines=5 \
            --max-connect-retries=20 --wait-for-pos-timeout=30) >"$out" 2>&1 </dev/null || rc=$?
        case $rc in
            0) status=pass ;;
            62) status=skip ;;
            124 | 137) status=timeout ;;
            *) status=fail ;;
        esac
        RESULT[$name,$t]=$status
        case $status in
            fail) CAUSE[$name,$t]=$(first_cause "$out") ;;
            skip) CAUSE[$name,$t]="skipped: $(grep -m1 '^reason: ' "$out" | cut -c9-150)" ;;
            timeout) CAUSE[$name,$t]="no result within ${TEST_TIMEOUT}s" ;;
        esac
        printf '  %-40s %s\n' "$t" "$status" >&2
        # A server that died (a crash, or a test that shuts it down): the test fails with
        # that cause, and the server starts again on a fresh data directory for the next.
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "scripts/mtr.sh: $name exited during $t; its log:" >&2
            tail -20 "$d/server.log" >&2
            RESULT[$name,$t]=fail
            CAUSE[$name,$t]="server exited: ${CAUSE[$name,$t]:-}"
            stop_server
            mv "$d/server.log" "$d/server.log.$base"
            rm -rf "$d/var/mysqld.1/data"
            "start_$name" "$port"
            load_mtr_schema "$name" >/dev/null
        fi
    done
}

run_server() { # name port
    local name=$1 port=$2
    echo "== $name (port $port): ${#TESTS[@]} tests, at most ${TEST_TIMEOUT}s each" >&2
    "start_$name" "$port"
    setup_env "$name" "$port"
    local failed
    failed=$(load_mtr_schema "$name")
    MTR_SCHEMA_ERRORS[$name]=$failed
    run_tests "$name" "$port"
    stop_server
}

# The whole run, in a function so that bash has read all of it before it starts (a run takes
# many minutes; editing this file meanwhile must not change what the run does).
main() {
    SERVERS=()
    [[ $ONLY == onelog ]] || SERVERS+=(mariadb)
    [[ $ONLY == mariadb ]] || SERVERS+=(onelog)
    port=$PORT_BASE
    for s in "${SERVERS[@]}"; do
        run_server "$s" "$port"
        port=$((port + 1))
    done

    # The report: one line per test, then the counts.
    echo
    printf '%-40s' test
    for s in "${SERVERS[@]}"; do printf ' %-8s' "$s"; done
    echo ' first cause (of the last server that did not pass)'
    for t in "${TESTS[@]}"; do
        printf '%-40s' "$t"
        cause=
        for s in "${SERVERS[@]}"; do
            printf ' %-8s' "${RESULT[$s,$t]:-}"
            [[ ${RESULT[$s,$t]:-} == pass ]] || cause=${CAUSE[$s,$t]:-}
        done
        echo " ${cause:0:200}"
    done
    echo
    for s in "${SERVERS[@]}"; do
        pass=0
        for t in "${TESTS[@]}"; do
            if [[ ${RESULT[$s,$t]:-} == pass ]]; then pass=$((pass + 1)); fi
        done
        echo "$s: $pass of ${#TESTS[@]} pass (statements of the mtr schema refused: ${MTR_SCHEMA_ERRORS[$s]})"
    done
    if [[ " ${SERVERS[*]} " == *" mariadb "* && " ${SERVERS[*]} " == *" onelog "* ]]; then
        both=0
        for t in "${TESTS[@]}"; do
            if [[ ${RESULT[mariadb,$t]:-} == pass && ${RESULT[onelog,$t]:-} == pass ]]; then
                both=$((both + 1))
            fi
        done
        echo "both: $both"
    fi

    if [[ -n $SELECT ]]; then
        {
            echo "# Tests of MariaDB's suite \`main\` that pass on MariaDB $(mariadbd --version | awk '{print $3}') under"
            echo "# scripts/mtr.sh: the list scripts/mtr.sh runs on MariaDB and onelog. scripts/mtr.sh --select"
            echo "# rewrites it from candidates.txt."
            for t in "${TESTS[@]}"; do
                if [[ ${RESULT[mariadb,$t]:-} == pass ]]; then echo "$t"; fi
            done
        } >"$LIST"
        echo "wrote $LIST"
    fi
}

main; exit 0
