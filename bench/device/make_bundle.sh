#!/bin/bash
# bench/device/make_bundle.sh — packs what bench/run needs onto a bare, offline x86-64 Linux
# machine with python3 (e.g. a lent 16-core device): onelog's release binary, Debian's
# mariadbd 10.11, sysbench and the mariadb client with their non-glibc libraries (run through
# wrappers that set LD_LIBRARY_PATH), their share files, the fsync_delay preload prebuilt (used
# through a gcc stand-in only where the machine has no gcc), and a MariaDB data directory made
# here by the real mariadb-install-db (a stand-in unpacks it there: the machine cannot install
# packages). Not a test; CI does not run it.
#
#   bench/device/make_bundle.sh [OUT_DIR]    # default .devb/ (ignore it: echo /.devb/ >> .git/info/exclude)
#
# On the machine, from the repository root: bench/device/run_commit.sh or run_repl.sh (they
# unpack OUT_DIR/bundle.tgz into /, so run them only on a throw-away machine, as root).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$repo/.devb}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
b=$stage/opt/devb
mkdir -p "$b"/{lib,real,bin,prebuilt,shim} "$stage/usr/share/mysql" "$stage/usr/share/sysbench"
(cd "$repo" && cargo build --release -p onelog)
strip -o "$b/real/onelog" "${CARGO_TARGET_DIR:-$repo/target}/release/onelog"
for x in /usr/sbin/mariadbd /usr/bin/sysbench /usr/bin/mariadb; do cp "$x" "$b/real/"; done
for x in /usr/sbin/mariadbd /usr/bin/sysbench /usr/bin/mariadb; do ldd "$x" | awk '$3 ~ /^\// {print $3}'; done |
    sort -u | grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv)\.so' |
    while read -r l; do cp -L "$l" "$b/lib/"; done
cp -a /usr/share/mysql/english /usr/share/mysql/charsets "$stage/usr/share/mysql/"
cp -a /usr/share/sysbench/. "$stage/usr/share/sysbench/"
gcc -O2 -Wall -Wextra -shared -fPIC -o "$b/prebuilt/fsync_delay.so" "$repo/bench/fsync_delay/fsync_delay.c" -ldl
gcc -O2 -Wall -o "$b/prebuilt/fsync_selftest" "$repo/bench/fsync_delay/selftest.c"
for x in mariadbd sysbench mariadb; do
    printf '#!/bin/sh\nLD_LIBRARY_PATH=/opt/devb/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec /opt/devb/real/%s "$@"\n' "$x" > "$b/bin/$x"
done
cat > "$b/bin/mariadb-install-db" <<'SH'
#!/bin/sh
# Stand-in: unpacks the data directory the real mariadb-install-db 10.11 made (then started
# once with --innodb-log-file-size=256M and shut down) into --datadir.
for a in "$@"; do case "$a" in --datadir=*) d="${a#--datadir=}";; esac; done
[ -n "$d" ] || { echo "no --datadir" >&2; exit 2; }
mkdir -p "$d" && tar xzf /opt/devb/mariadb-data.tar.gz -C "$d"
SH
cat > "$b/shim/gcc" <<'SH'
#!/bin/sh
# Stand-in where the machine has no gcc: copies the prebuilt file named by -o.
o=""; prev=""; for a in "$@"; do [ "$prev" = "-o" ] && o="$a"; prev="$a"; done
cp "/opt/devb/prebuilt/$(basename "$o")" "$o"
SH
chmod +x "$b"/bin/* "$b/shim/gcc"
# A data directory from the real installer, its redo log already at the harness's 256M.
md=$stage/md
mariadb-install-db --no-defaults --datadir="$md/data" --user="$(id -un)" --auth-root-authentication-method=normal > "$md.log" 2>&1
/usr/sbin/mariadbd --no-defaults --datadir="$md/data" --socket="$md/s" --port=29991 --bind-address=127.0.0.1 \
    --user="$(id -un)" --innodb-log-file-size=256M --skip-name-resolve >> "$md.log" 2>&1 &
for _ in $(seq 1 120); do mariadb --no-defaults -S "$md/s" -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.5; done
mariadb --no-defaults -S "$md/s" -uroot -e shutdown
wait
tar czf "$b/mariadb-data.tar.gz" -C "$md/data" .
rm -rf "$md"
mkdir -p "$out"
tar czf "$out/bundle.tgz" -C "$stage" opt usr
ls -la "$out/bundle.tgz"
