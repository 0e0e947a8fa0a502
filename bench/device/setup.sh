# bench/device/setup.sh — sourced by run_commit.sh / run_repl.sh: unpacks the bundle made by
# make_bundle.sh into / and puts its wrappers first on PATH. Throw-away machines only.
bundle=${DEVB:-.devb}/bundle.tgz
tar xzf "$bundle" -C / || { echo "cannot unpack $bundle"; exit 3; }
export PATH=/opt/devb/bin:$PATH
command -v gcc >/dev/null || export PATH=$PATH:/opt/devb/shim
OUT=${OUT:-/tmp/devout}
mkdir -p "$OUT"
{ uname -r; nproc; ldd --version | head -1; python3 --version; mariadbd --version; sysbench --version
  /opt/devb/real/onelog --version; } > "$OUT/env.txt" 2>&1
mariadbd --version >/dev/null 2>&1 && sysbench --version >/dev/null 2>&1 &&
    /opt/devb/real/onelog --version >/dev/null || { cat "$OUT/env.txt"; echo "the bundle does not run here"; exit 4; }
