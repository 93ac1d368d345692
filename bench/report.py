#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Turns the raw output of bench/guest-compare.sh into the comparison.

usage: bench/report.py OUTDIR
       bench/report.py --check OUTDIR CONFIG...

Reads OUTDIR/raw/r<round>-<config>.txt and OUTDIR/callgrind/, prints the
table, one line per figure (`figure NAME ours=X baseline=Y ratio=Z`) and
the instruction counts, and writes OUTDIR/results.csv (every measurement),
OUTDIR/summary.csv (medians over the rounds), OUTDIR/report.md (the same
tables in Markdown) and, with gnuplot, OUTDIR/latency.svg and
OUTDIR/throughput.svg.

A ratio is ours / baseline, taken round by round (each round ran both,
one after the other) and then the median over the rounds; ours= and
baseline= are the medians of the values themselves. GPSPM (ours-gpspm)
has no librpma baseline (librpma 1.x leaves GPSPM to the application):
it is compared with ours, read-after-write, in the same round.

--check: the bench suite's test. Every configuration named must have run
every mode at the sizes of guest-compare.sh's `check` profile, with
numbers that parse and make sense (a configuration named *-untimed: the
exact number of operations; one named *-gpspm: every mode but
sendrecv-lat); exits 1 otherwise.
"""

import csv
import os
import re
import shutil
import statistics
import subprocess
import sys
from collections import defaultdict

LAT_FIELDS = ["p50_us", "p99_us", "p999_us", "avg_us", "min_us", "max_us"]
CONFIG_ORDER = ["perftest", "librpma", "ours", "ours-batch", "ours-gpspm"]
# GPSPM carries no librpma baseline: its ratio is against read-after-write
GPSPM_BASELINE = "ours"
KIB = 1024


def size_name(n):
    n = int(n)
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= KIB and n % KIB == 0:
        return f"{n >> 10} KiB"
    return f"{n} B"


def parse_kv(line):
    return dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)


def read_raw(outdir):
    """[(round, config, fields)] for every result line, and the run headers."""
    rows, runs = [], {}
    rawdir = os.path.join(outdir, "raw")
    for name in sorted(os.listdir(rawdir)):
        m = re.fullmatch(r"r(\d+)-(.+)\.txt", name)
        if not m:
            continue
        rnd, config = int(m.group(1)), m.group(2)
        lib = None
        status = None
        served = []
        with open(os.path.join(rawdir, name)) as f:
            for line in f:
                line = line.rstrip("\n")
                if line.startswith("result "):
                    rows.append((rnd, config, parse_kv(line)))
                elif line.startswith("library "):
                    lib = parse_kv(line).get("path")
                elif line.startswith("status "):
                    status = parse_kv(line)
                elif line.startswith("server: server gpspm "):
                    served.append(parse_kv(line[len("server: "):].split(" ", 1)[1]))
        runs[(rnd, config)] = {"library": lib, "status": status, "gpspm_server": served}
    return rows, runs


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------- check

CHECK_EXPECT = {
    "write-lat": [64, 4096],
    "write-tput": [4096],
    "read-lat": [64, 4096],
    "sendrecv-lat": [64],
}


def check(outdir, configs):
    rows, runs = read_raw(outdir)
    bad = []
    for config in configs:
        if (1, config) not in runs:
            bad.append(f"{config}: did not run")
            continue
        run = runs[(1, config)]
        st = run["status"] or {}
        if st.get("client") != "0" or st.get("server") != "0":
            bad.append(f"{config}: exit status {st or 'missing'}")
        if not run["library"] or not run["library"].endswith("librpma.so.0"):
            bad.append(f"{config}: no library line")
        got = defaultdict(list)
        for rnd, c, f in rows:
            if c == config:
                got[(f.get("mode"), int(f.get("size", -1)))].append(f)
        expect = dict(CHECK_EXPECT)
        if config.endswith("-gpspm"):
            del expect["sendrecv-lat"]  # GPSPM takes the receive queue
        for mode, sizes in expect.items():
            for size in sizes:
                found = got.get((mode, size))
                if not found:
                    bad.append(f"{config}: no result for {mode} {size}")
                    continue
                f = found[0]
                if mode == "write-tput":
                    vals = [num(f.get(k)) for k in ("mb_s", "seconds", "writes_s")]
                    if None in vals or min(vals) <= 0 or num(f.get("batches")) != 5:
                        bad.append(f"{config}: bad {mode} {size}: {f}")
                elif config.endswith("-untimed"):
                    if f.get("untimed") != "1" or num(f.get("iters")) != 5:
                        bad.append(f"{config}: bad {mode} {size}: {f}")
                else:
                    vals = [num(f.get(k)) for k in LAT_FIELDS]
                    if None in vals or min(vals) <= 0 or num(f.get("iters")) != 5:
                        bad.append(f"{config}: bad {mode} {size}: {f}")
                    elif not (vals[4] <= vals[0] <= vals[1] <= vals[2] <= vals[5]):
                        bad.append(f"{config}: percentiles out of order in {mode} {size}: {f}")
        extra = set(got) - {(m, s) for m, ss in expect.items() for s in ss}
        if extra:
            bad.append(f"{config}: unexpected results {sorted(extra)}")
    for b in bad:
        print("check: " + b)
    if not bad:
        print(f"check: {', '.join(configs)}: every mode ran and parsed")
    return 1 if bad else 0


# ---------------------------------------------------------------- callgrind


def cg_functions(path):
    """{(object, function): Ir} of a callgrind output, exclusive costs."""
    out = subprocess.run(
        ["callgrind_annotate", "--inclusive=no", "--threshold=100", "--auto=no", path],
        capture_output=True, text=True, check=True).stdout
    costs = defaultdict(int)
    last_obj = {}
    started = False
    for line in out.splitlines():
        if "file:function" in line:
            started = True
            continue
        if not started:
            continue
        if not line.strip():
            break  # the end of the function list
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*?)(?:\s+\[(.*)\])?$", line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        where = m.group(2)
        # "file:function": a path has no colon, a C++ name may (rpma::f(x::y*))
        fn = where.split(":", 1)[1] if ":" in where else where
        obj = m.group(3)
        if obj:
            last_obj[fn] = os.path.basename(obj)
        costs[(fn,)] += ir
    return {(last_obj.get(k[0], "?"), k[0]): v for k, v in costs.items()}


def cg_total(path):
    with open(path) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    raise ValueError(f"{path}: no totals")


def cg_stats(path):
    with open(path) as f:
        for line in f:
            if line.startswith("stats "):
                return {k: int(v) for k, v in parse_kv(line).items()}
    return {}


def callgrind(outdir):
    """{name: {...}} per pair of runs listed in callgrind/runs.txt."""
    cgdir = os.path.join(outdir, "callgrind")
    runs_txt = os.path.join(cgdir, "runs.txt")
    result = {}
    if not os.path.exists(runs_txt) or not shutil.which("callgrind_annotate"):
        return result
    with open(runs_txt) as f:
        for line in f:
            kv = parse_kv(line)
            name, n1, n2 = kv["name"], int(kv["ops1"]), int(kv["ops2"])
            p1 = os.path.join(cgdir, f"{name}-{n1}")
            p2 = os.path.join(cgdir, f"{name}-{n2}")
            if not (os.path.exists(p1 + ".out") and os.path.exists(p2 + ".out")):
                continue
            ops = n2 - n1
            t1, t2 = cg_total(p1 + ".out"), cg_total(p2 + ".out")
            f1, f2 = cg_functions(p1 + ".out"), cg_functions(p2 + ".out")
            per_fn = {k: (f2.get(k, 0) - f1.get(k, 0)) / ops for k in set(f1) | set(f2)}
            per_obj = defaultdict(float)
            for (obj, _), v in per_fn.items():
                per_obj[obj] += v
            s1, s2 = cg_stats(p1 + ".txt"), cg_stats(p2 + ".txt")
            result[name] = {
                "ops": ops,
                "per_op": (t2 - t1) / ops,
                "per_fn": per_fn,
                "per_obj": dict(per_obj),
                "empty_polls_per_op": (s2.get("empty_polls", 0) - s1.get("empty_polls", 0)) / ops,
                "waits_per_op": (s2.get("waits", 0) - s1.get("waits", 0)) / ops,
            }
    return result


# ------------------------------------------------------------------- report


def main(outdir):
    rows, runs = read_raw(outdir)
    rounds = sorted({r for r, _, _ in rows})
    configs = [c for c in CONFIG_ORDER if any(c == cc for _, cc, _ in rows)]

    # every measurement
    with open(os.path.join(outdir, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["round", "config", "mode", "size", "iters", *LAT_FIELDS, "mb_s"])
        for rnd, config, fl in rows:
            w.writerow([rnd, config, fl.get("mode"), fl.get("size"),
                        fl.get("iters", fl.get("batches", "")),
                        *[fl.get(k, "") for k in LAT_FIELDS], fl.get("mb_s", "")])

    # value[(config, mode, size)][round] = p50 (latency) or MB/s
    value = defaultdict(dict)
    p99 = defaultdict(dict)
    for rnd, config, fl in rows:
        key = (config, fl["mode"], int(fl["size"]))
        if "p50_us" in fl:
            value[key][rnd] = float(fl["p50_us"])
            p99[key][rnd] = float(fl["p99_us"])
        elif "mb_s" in fl:
            value[key][rnd] = float(fl["mb_s"])

    def med(key, table=value):
        v = table.get(key)
        return statistics.median(v.values()) if v else None

    def ratio(a, b):
        """median over rounds of a/b, and the spread"""
        va, vb = value.get(a, {}), value.get(b, {})
        rs = [va[r] / vb[r] for r in va if r in vb and vb[r] > 0]
        if not rs:
            return None, None, None
        return statistics.median(rs), min(rs), max(rs)

    lines_md = []
    out = []

    def emit(s=""):
        out.append(s)

    # -------------------------------------------------------------- table
    modes = [
        ("write-lat", "persistent write (write + flush + completion), p50 / p99 us", "perftest-write-lat"),
        ("read-lat", "read, p50 / p99 us", "perftest-read-lat"),
        ("sendrecv-lat", "send/recv ping-pong, p50 / p99 us", None),
        ("write-tput", "pipelined persistent writes (16 writes + 1 flush, 4 flushes in flight), MB/s",
         "perftest-write-bw"),
    ]
    perf_names = {"perftest-write-lat": "ib_write_lat (one-way)",
                  "perftest-read-lat": "ib_read_lat", "perftest-write-bw": "ib_write_bw"}
    tool_configs = [c for c in configs if c != "perftest"]
    for mode, title, pmode in modes:
        sizes = sorted({s for (c, m, s) in value if m == mode})
        if not sizes:
            continue
        hdr = ["size"]
        if pmode and "perftest" in configs:
            hdr.append(perf_names[pmode])
        hdr += tool_configs

        def ratio_base(c):
            """the baseline of c's ratio column, or None"""
            if c == "ours-gpspm":
                return GPSPM_BASELINE if GPSPM_BASELINE in tool_configs else None
            return "librpma" if c != "librpma" and "librpma" in tool_configs else None

        hdr += [f"{c}/{ratio_base(c)}" for c in tool_configs if ratio_base(c)]
        md = [f"**{title}** (median of {len(rounds)} round(s))", "",
              "| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
        for s in sizes:
            cells = [size_name(s)]

            def cell(key):
                v = med(key)
                if v is None:
                    return "-"
                if mode == "write-tput":
                    return f"{v:.1f}"
                q = med(key, p99)
                return f"{v:.1f} / {q:.0f}" if q is not None else f"{v:.1f}"

            if pmode and "perftest" in configs:
                cells.append(cell(("perftest", pmode, s)))
            for c in tool_configs:
                cells.append(cell((c, mode, s)))
            for c in tool_configs:
                if not ratio_base(c):
                    continue
                r, lo, hi = ratio((c, mode, s), (ratio_base(c), mode, s))
                cells.append("-" if r is None else f"{r:.2f} ({lo:.2f}-{hi:.2f})")
            md.append("| " + " | ".join(cells) + " |")
        md.append("")
        lines_md += md
    emit("\n".join(lines_md))

    # ------------------------------------------------------------ figures
    cg = callgrind(outdir)
    figures = []  # (name, ours, baseline, ratio, goal)

    def fig_timed(name, ours, base, goal=""):
        r, lo, hi = ratio(ours, base)
        o, b = med(ours), med(base)
        if r is None or o is None or b is None:
            return
        figures.append((name, o, b, r, goal, f"{lo:.2f}-{hi:.2f}"))

    def fig_cg(name, ours, base, per=1, goal=""):
        if ours in cg and base in cg:
            o, b = cg[ours]["per_op"] / per, cg[base]["per_op"] / per
            figures.append((name, o, b, o / b, goal, "exact"))

    have_batch = "ours-batch" in configs
    for size, label in ((64, "64B"), (4096, "4KiB")):
        if have_batch:
            fig_timed(f"write_lat_p50_{label}_batch_vs_librpma", ("ours-batch", "write-lat", size),
                      ("librpma", "write-lat", size), "<= 0.85")
        fig_timed(f"write_lat_p50_{label}_1x_vs_librpma", ("ours", "write-lat", size),
                  ("librpma", "write-lat", size), "<= 1.0")
    if have_batch:
        fig_timed("write_tput_4KiB_batch_vs_librpma", ("ours-batch", "write-tput", 4096),
                  ("librpma", "write-tput", 4096), ">= 1.5")
    fig_timed("write_tput_4KiB_1x_vs_librpma", ("ours", "write-tput", 4096),
              ("librpma", "write-tput", 4096), "")
    if have_batch:
        fig_timed("write_tput_64KiB_batch_vs_ib_write_bw", ("ours-batch", "write-tput", 65536),
                  ("perftest", "perftest-write-bw", 65536), ">= 0.9")
    fig_timed("write_tput_64KiB_1x_vs_ib_write_bw", ("ours", "write-tput", 65536),
              ("perftest", "perftest-write-bw", 65536), "" if have_batch else ">= 0.9")
    fig_timed("write_tput_64KiB_librpma_vs_ib_write_bw", ("librpma", "write-tput", 65536),
              ("perftest", "perftest-write-bw", 65536), "")
    fig_timed("read_lat_p50_64B_1x_vs_librpma", ("ours", "read-lat", 64), ("librpma", "read-lat", 64))
    fig_timed("read_lat_p50_64B_1x_vs_ib_read_lat", ("ours", "read-lat", 64),
              ("perftest", "perftest-read-lat", 64))
    fig_timed("sendrecv_lat_p50_64B_1x_vs_librpma", ("ours", "sendrecv-lat", 64),
              ("librpma", "sendrecv-lat", 64), "<= 1.0")
    fig_cg("instr_per_persistent_write_1x_vs_librpma", "ours-write64", "librpma-write64", 1, "<= 0.9")
    fig_cg("instr_per_persistent_write_batch_vs_librpma", "ours-batch-write64", "librpma-write64", 1,
           "<= 0.5")
    fig_cg("instr_per_persistent_write_wait_completion_vs_librpma", "ours-completion-write64",
           "librpma-write64")
    fig_cg("instr_per_pipelined_write_4KiB_1x_vs_librpma", "ours-pipe4k", "librpma-pipe4k", 16)
    fig_cg("instr_per_pipelined_write_4KiB_batch_vs_librpma", "ours-batch-pipe4k", "librpma-pipe4k", 16)
    # GPSPM: no librpma baseline; ours with read-after-write in the same round
    for size, label in ((64, "64B"), (4096, "4KiB")):
        fig_timed(f"write_lat_p50_{label}_gpspm_vs_read_after_write",
                  ("ours-gpspm", "write-lat", size), (GPSPM_BASELINE, "write-lat", size),
                  "<= 1.5")
    fig_cg("instr_per_persistent_write_gpspm_vs_read_after_write", "ours-gpspm-write64",
           "ours-write64")

    md = ["**Figures** (ratio = ours / baseline, median of the per-round ratios; "
          "instruction counts are exact)", "",
          "| figure | ours | baseline | ratio | spread over rounds | goal | met |",
          "|---|---|---|---|---|---|---|"]
    for name, o, b, r, goal, spread in figures:
        met = ""
        if goal:
            op, lim = goal.split()
            met = "yes" if (r <= float(lim) if op == "<=" else r >= float(lim)) else "no"
        md.append(f"| {name} | {o:.1f} | {b:.1f} | {r:.3f} | {spread} | {goal} | {met} |")
    md.append("")
    emit("\n".join(md))
    lines_md += md

    # ------------------------------------------------- GPSPM target's CPU
    served = [(r, d) for (r, c), v in sorted(runs.items()) if c == "ours-gpspm"
              for d in v.get("gpspm_server") or []]
    if served:
        md = ["**The GPSPM target's CPU** (the server process's user and system time "
              "while it served one client's `write-lat` run: the library's thread, its "
              "spin, the persist function; share = CPU time / wall time)", "",
              "| round | requests | spin (us) | CPU share | CPU per request (us) |",
              "|---|---|---|---|---|"]
        for r, d in served:
            md.append(f"| {r} | {d.get('requests')} | {d.get('spin_us')} | "
                      f"{float(d.get('cpu_share', 0)):.2f} | "
                      f"{float(d.get('cpu_per_request_us', 0)):.1f} |")
        md.append("")
        emit("\n".join(md))
        lines_md += md

    # ----------------------------------------------------------- callgrind
    if cg:
        md = ["**User-space instructions per operation** (callgrind, whole process: "
              "tool, library, provider, libibverbs, libc; the difference of two runs "
              "that differ only in the number of operations)", "",
              "| run | operation | instructions | empty polls | waits | by object |",
              "|---|---|---|---|---|---|"]
        for name, d in cg.items():
            what = "persistent write (64 B)" if "write64" in name else "batch of 16 x 4 KiB + flush"
            objs = ", ".join(f"{o} {v:.0f}" for o, v in
                             sorted(d["per_obj"].items(), key=lambda x: -x[1]) if abs(v) >= 5)
            md.append(f"| {name} | {what} | {d['per_op']:.0f} | {d['empty_polls_per_op']:.2f} "
                      f"| {d['waits_per_op']:.2f} | {objs} |")
        md.append("")
        for name, d in cg.items():
            md.append(f"Top functions of `{name}` (instructions per operation, exclusive):")
            md.append("")
            md.append("| instructions | function | object |")
            md.append("|---|---|---|")
            top = sorted(d["per_fn"].items(), key=lambda x: -x[1])[:15]
            for (obj, fn), v in top:
                if v >= 1:
                    md.append(f"| {v:.0f} | {fn} | {obj} |")
            md.append("")
        emit("\n".join(md))
        lines_md += md

    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write("\n".join(lines_md) + "\n")

    # medians for the plots
    with open(os.path.join(outdir, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["config", "mode", "size", "median", "rounds"])
        for key in sorted(value):
            w.writerow([*key, f"{med(key):.3f}", len(value[key])])
    plot(outdir, value, med)

    print("\n".join(out))
    for name, o, b, r, goal, spread in figures:
        print(f"figure {name} ours={o:.2f} baseline={b:.2f} ratio={r:.3f}")
    failed = [k for k, v in runs.items() if (v["status"] or {}).get("client", "0") != "0"]
    return 1 if failed else 0


def plot(outdir, value, med):
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        print("report: gnuplot not found: no plots", file=sys.stderr)
        return
    series = {
        "latency": [
            ("librpma", "write-lat", "librpma: persistent write"),
            ("ours", "write-lat", "ours (1.x calls): persistent write"),
            ("ours-batch", "write-lat", "ours (one doorbell): persistent write"),
            ("ours-gpspm", "write-lat", "ours (GPSPM): persistent write"),
            ("librpma", "read-lat", "librpma: read"),
            ("ours", "read-lat", "ours: read"),
            ("perftest", "perftest-read-lat", "ib_read_lat"),
            ("perftest", "perftest-write-lat", "ib_write_lat (one-way)"),
        ],
        "throughput": [
            ("librpma", "write-tput", "librpma"),
            ("ours", "write-tput", "ours (1.x calls)"),
            ("ours-batch", "write-tput", "ours (one doorbell)"),
            ("perftest", "perftest-write-bw", "ib_write_bw (64 writes outstanding)"),
        ],
    }
    datadir = os.path.join(outdir, "plot-data")
    os.makedirs(datadir, exist_ok=True)
    for kind, ss in series.items():
        plots = []
        sizes = set()
        for i, (config, mode, title) in enumerate(ss):
            pts = sorted((s, med((c, m, s))) for (c, m, s) in value if c == config and m == mode)
            if not pts:
                continue
            sizes |= {s for s, _ in pts}
            dat = os.path.join(datadir, f"{kind}-{i}.dat")
            with open(dat, "w") as f:
                for s, v in pts:
                    f.write(f"{s} {v}\n")
            plots.append(f"'{dat}' using 1:2 with linespoints pt {i + 1} title \"{title}\"")
        if not plots:
            continue
        ylabel = "p50 latency [us]" if kind == "latency" else "MB/s (10^6 bytes)"
        script = f"""
set terminal svg size 720,440 dynamic font "sans,11"
set output '{os.path.join(outdir, kind + ".svg")}'
set logscale x 2
{"set logscale y 10" if kind == "latency" else "set yrange [0:*]"}
set xtics ({", ".join(f'"{size_name(s)}" {s}' for s in sorted(sizes))})
set xlabel "operation size [bytes]"
set ylabel noenhanced "{ylabel}"
set key {"top left" if kind == "latency" else "bottom right"} noenhanced box opaque
set grid
set title noenhanced "{"latency by size" if kind == "latency" else "pipelined persistent writes: throughput by size"} (soft RoCE under TCG: compare ratios only)"
plot {", ".join(plots)}
"""
        subprocess.run([gnuplot], input=script, text=True, check=True)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], sys.argv[3:]))
    if len(sys.argv) != 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
