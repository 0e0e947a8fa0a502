#!/usr/bin/env bash
# The whole test suite in one command, on a fresh Debian 12 machine:
#   scripts/test.sh
# 1. makes sure the real programs the integration tests drive are installed (sysbench 1.0.20,
#    the mariadb CLI, mariadb-slap and mariadb-binlog, and MariaDB 10.11's server mariadbd
#    with mariadb-install-db, the peer of tests/mariadb_peer.rs and tests/replication_*.rs, and
#    python3 with venv for tests/replication_cdc.rs): installs them with apt-get
#    when missing and running as root, otherwise says what to install and fails;
# 2. runs `cargo test --workspace --profile ci` (extra arguments are passed to cargo test): the
#    `ci` profile is release code with debug assertions on (Cargo.toml), so the invariants'
#    `debug_assert!`s run under every test;
# The tests never skip for a missing client: they fail, pointing here.
set -euo pipefail
cd "$(dirname "$0")/.."

# program -> Debian package that provides it
declare -A NEEDED=(
    [sysbench]=sysbench
    [mariadb]=mariadb-client
    [mariadb-slap]=mariadb-client
    [mariadb-binlog]=mariadb-client
    [mariadb-admin]=mariadb-client
    [prometheus-mysqld-exporter]=prometheus-mysqld-exporter
    [mariadbd]=mariadb-server
    [mariadb-install-db]=mariadb-server
    [python3]=python3
    [mariadb-dump]=mariadb-client
    [mydumper]=mydumper
    [myloader]=mydumper
)

missing_pkgs=()
# mariadbd lives in /usr/sbin, which a non-login PATH may lack.
export PATH="$PATH:/usr/sbin:/usr/local/sbin"
for prog in "${!NEEDED[@]}"; do
    if ! command -v "$prog" >/dev/null 2>&1; then
        pkg=${NEEDED[$prog]}
        [[ " ${missing_pkgs[*]-} " == *" $pkg "* ]] || missing_pkgs+=("$pkg")
    fi
done

# tests/replication_cdc.rs makes a venv (python3 -m venv needs ensurepip: python3-venv on
# Debian) and pip-installs python-mysql-replication into it from PyPI.
if ! python3 -c 'import ensurepip' >/dev/null 2>&1; then
    missing_pkgs+=(python3-venv)
fi

if ((${#missing_pkgs[@]})); then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
        echo "== installing ${missing_pkgs[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing_pkgs[@]}"
        # The Debian package starts a system mariadbd; the tests start their own on temporary
        # data directories and need nothing from it.
        if [[ " ${missing_pkgs[*]} " == *" mariadb-server "* ]] && command -v service >/dev/null; then
            service mariadb stop >/dev/null 2>&1 || true
        fi
    else
        echo "scripts/test.sh: missing ${missing_pkgs[*]}." >&2
        echo "Install them first (as root): apt-get install -y ${missing_pkgs[*]}" >&2
        exit 1
    fi
fi

echo "== $(sysbench --version), $(mariadb --version), $(mariadbd --version)"
echo "== cargo test --workspace --profile ci"
cargo test --workspace --profile ci "$@"
# 3. the server-level tests (crates/onelog/tests) again, every server that does not choose a
#    table store started on the paged one (`ONELOG_TEST_TABLE_STORE`, tests/common): real
#    replicas, CDC clients, file mode, the mirror, drivers, queries compared with MariaDB and
#    kill -9 over the paged store (docs/PAGED_STORE.md, "Everything still holds").
echo "== cargo test -p onelog --profile ci, servers on the paged table store"
ONELOG_TEST_TABLE_STORE=paged cargo test -p onelog --profile ci "$@"
