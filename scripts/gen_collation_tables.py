#!/usr/bin/env python3
"""Regenerates crates/engine/src/collation_tables.rs from a running MariaDB 10.11.

Usage: scripts/gen_collation_tables.py SOCKET > crates/engine/src/collation_tables.rs
It asks MariaDB for WEIGHT_STRING of every BMP code point under utf8mb4_general_ci and
utf8mb4_unicode_ci and writes them as runs (see the generated file's header).
"""
import subprocess, sys

sock = sys.argv[1]
q = ("select seq, hex(weight_string(convert(char(seq using utf32) using utf8mb4) collate "
     "utf8mb4_general_ci)), hex(weight_string(convert(char(seq using utf32) using utf8mb4) "
     "collate utf8mb4_unicode_ci)) from seq_0_to_65535 where seq not between 55296 and 57343")
rows = subprocess.run(["mariadb", "-uroot", "-S", sock, "-N", "-B", "test", "-e", q],
                      check=True, capture_output=True, text=True).stdout
g, u = {}, {}
for line in rows.splitlines():
    p = line.split('\t')
    cp = int(p[0]); g[cp] = int(p[1], 16)
    w = p[2] if len(p) > 2 else ''
    u[cp] = [int(w[i:i + 4], 16) for i in range(0, len(w), 4)]
for cp in range(0xD800, 0xE000):
    g[cp] = 0xFFFD; u[cp] = [0xFFFD]

def general_runs():
    out, cp = [], 0
    while cp < 65536:
        w, best = g[cp], None
        for step in (1, 0):
            n = 1
            while cp + n < 65536 and g[cp + n] == w + step * n:
                n += 1
            if best is None or n > best[1]:
                best = (step, n)
        out.append((cp, best[1], w, best[0])); cp += best[1]
    return out

def kind(c):
    v = u[c]
    if len(v) == 1:
        return ('s', v[0])
    if len(v) == 2 and v[1] == ((c & 0x7FFF) | 0x8000) and v[0] - (c >> 15) in (0xFB40, 0xFB80, 0xFBC0):
        return ('i', v[0] - (c >> 15))
    return ('x', tuple(v))

exp, urs, c = [], [], 0
while c < 65536:
    k, w = kind(c)
    if k == 's':
        best = None
        for step in (1, 0):
            n = 1
            while c + n < 65536 and kind(c + n) == ('s', w + step * n):
                n += 1
            if best is None or n > best[1]:
                best = (step, n)
        urs.append((c, best[1], w, best[0])); c += best[1]
    elif k == 'i':
        n = 1
        while c + n < 65536 and kind(c + n) == ('i', w):
            n += 1
        urs.append((c, n, w, 2)); c += n
    else:
        n = 1
        while c + n < 65536 and kind(c + n)[0] == 'x':
            n += 1
        urs.append((c, n, len(exp), 3))
        for j in range(n):
            exp.append(kind(c + j)[1])
        c += n
flat, starts = [], []
for v in exp:
    starts.append(len(flat)); flat.extend(v)
starts.append(len(flat))
gr = general_runs()
o = sys.stdout
o.write("//! Generated from MariaDB 10.11.19 (WEIGHT_STRING of every BMP code point under\n"
        "//! utf8mb4_general_ci and utf8mb4_unicode_ci) by a script; do not edit by hand.\n//!\n"
        "//! Runs are `(first code point, length, weight, kind)`: kind 0 = every code point of the run\n"
        "//! weighs `weight`; 1 = weight + offset in the run; 2 (unicode only) = UCA implicit weight\n"
        "//! with base `weight`; 3 (unicode only) = expansion list `weight + offset` in\n"
        "//! [`UNICODE_EXPANSION_STARTS`].\n\n")
o.write("pub(super) static GENERAL_RUNS: [(u16, u16, u16, u8); %d] = [\n" % len(gr))
for r in gr:
    o.write("    (0x%04X, %d, 0x%04X, %d),\n" % r)
o.write("];\n\n")
o.write("pub(super) static UNICODE_RUNS: [(u16, u16, u16, u8); %d] = [\n" % len(urs))
for r in urs:
    o.write("    (0x%04X, %d, 0x%04X, %d),\n" % r)
o.write("];\n\n")
o.write("pub(super) static UNICODE_EXPANSION_STARTS: [u16; %d] = [\n" % len(starts))
for i in range(0, len(starts), 12):
    o.write("    " + " ".join("%d," % x for x in starts[i:i + 12]) + "\n")
o.write("];\n\n")
o.write("pub(super) static UNICODE_EXPANSIONS: [u16; %d] = [\n" % len(flat))
for i in range(0, len(flat), 10):
    o.write("    " + " ".join("0x%04X," % x for x in flat[i:i + 10]) + "\n")
o.write("];\n")
