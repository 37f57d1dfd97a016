"""Rows per second of Spark local mode and of dedupsim on the same scenario,
for oracle.py's speed table (WORK/speed.md). Measures only: nothing here
decides a verdict. Its tests: `PYTHONDONTWRITEBYTECODE=1 python3 -m doctest
oracles/spark/speed.py`.

Definitions (the tables are in BENCHMARKS.md, "Against Spark itself"):

- rows: the rows every query of the scenario read, summed over its queries
  (Spark: the numInputRows of every progress event of the export; dedupsim:
  the inputRows of every query of summary.json). A scenario of R rows and Q
  queries is Q*R rows for both.
- Spark rows/s (processing): rows over the sum of durationMs.triggerExecution
  of every progress event of the export (data and no-data batches).
- Spark rows/s (wall): rows over the seconds suite.py times for the export:
  from loading its job.py to its last query's stop (query starts, feeding the
  batch files, restarts included).
- dedupsim rows/s (wall): rows over the median wall time of REPEATS runs of
  `simulate run SCENARIO --quiet --no-report` (the whole process: start-up,
  generation, every query, writing the results files); (CPU): rows over the
  median user+system CPU of those runs (resource.getrusage of children).
- dedupsim rows/s (engine): the summary's own figure, rows over the sum of
  the queries' wallSeconds (the time spent in the operator models alone).
- not per row: the share of the export's triggerExecution that is not
  proportional to its rows, 1 - b * rows / triggerExecution, where b (ms per
  row) is the slope of a line ms = a + b * numInputRows fitted by least
  squares to the data batches of every scenario on one Spark version (a
  query's batch 0, which pays for the cold start, left out of the fit).
  Shown only when those batches' rows span at least 10x and the slope is
  positive: without large and small batches side by side (speed/large.yaml)
  a line cannot tell the per-batch cost from the per-row one.
"""

import json
import os
import resource
import shutil
import subprocess
import time

REPEATS = 5


def spark_progress(path):
    """Reads an export's progress file: (rows, trigger ms, batches) where
    batches is a list of (numInputRows, triggerExecution ms, batchId)."""
    batches = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            p = json.loads(line)
            ms = (p.get("durationMs") or {}).get("triggerExecution")
            if ms is None:
                continue
            batches.append((int(p.get("numInputRows") or 0), float(ms), int(p.get("batchId", -1))))
    rows = sum(b[0] for b in batches)
    return rows, sum(b[1] for b in batches), batches


def fit(batches):
    """Least-squares a, b of ms = a + b*rows over the data batches but each
    query's batch 0; None when their rows span less than 10x or the slope is
    not positive.

    >>> fit([(5, 900.0, 0), (100, 110.0, 1), (1000, 200.0, 2), (0, 50.0, 3)])
    (100.0, 0.1)
    >>> fit([(100, 110.0, 1), (300, 130.0, 2)]) is None
    True
    >>> fit([(100, 210.0, 1), (1000, 130.0, 2)]) is None
    True
    """
    data = [(b[0], b[1]) for b in batches if b[0] > 0 and b[2] != 0]
    n = len(data)
    if n < 2 or max(r for r, _ in data) < 10 * min(r for r, _ in data):
        return None
    mx = sum(r for r, _ in data) / n
    my = sum(m for _, m in data) / n
    sxx = sum((r - mx) ** 2 for r, _ in data)
    if sxx == 0:
        return None
    b = sum((r - mx) * (m - my) for r, m in data) / sxx
    if b <= 0:
        return None
    return my - b * mx, b


def simulator(simulate, scenario, work, repeats=REPEATS):
    """Times `simulate run` on scenario: a dict of rows, wall, cpu and engine
    seconds (medians of repeats runs), or raises RuntimeError."""
    walls, cpus, engines, rows = [], [], [], None
    for i in range(repeats):
        out = os.path.join(work, "run-%d" % i)
        shutil.rmtree(out, ignore_errors=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        r = subprocess.run([simulate, "run", scenario, "--quiet", "--no-report", "--out", out],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode != 0:
            raise RuntimeError("simulate run %s: %s" % (scenario, r.stderr.strip()[-300:]))
        with open(os.path.join(out, "summary.json"), encoding="utf-8") as fh:
            queries = json.load(fh)["queries"]
        shutil.rmtree(out, ignore_errors=True)
        rows = sum(q["inputRows"] for q in queries)
        walls.append(wall)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        engines.append(sum(q["wallSeconds"] for q in queries))
    med = lambda xs: sorted(xs)[len(xs) // 2]
    return {"rows": rows, "wall": med(walls), "cpu": med(cpus), "engine": med(engines), "repeats": repeats}


def rate(rows, seconds):
    return rows / seconds if seconds > 0 else float("inf")


def fmt(x):
    if x == float("inf"):
        return "inf"
    if x >= 100:
        return "{:,.0f}".format(x)
    return "{:.2g}".format(x) if x < 10 else "{:.1f}".format(x)


def table(measures, sims, fits):
    """The Markdown speed table. measures: (scenario, version, rows, trigger
    ms, wall s, batches) per export and Spark version; sims: scenario ->
    simulator() dict or an error string; fits: version -> (a, b) or None."""
    out = ["| scenario | rows (all queries) | Spark | batches | Spark rows/s (processing) | Spark rows/s (wall) "
           "| not per row | dedupsim rows/s (wall) | (CPU) | (engine) | ratio wall / processing "
           "| ratio wall / wall | ratio engine / processing |",
           "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    notes = []
    for scenario, version, rows, ms, wall, batches in measures:
        sp, sw = rate(rows, ms / 1000), rate(rows, wall)
        f = fits.get(version)
        if f:
            share = "%.1f%%" % (100 * (1 - f[1] * rows / ms))
        else:
            share = "-"
        s = sims.get(scenario)
        if not isinstance(s, dict):
            out.append("| `%s` | %s | %s | %d | %s | %s | %s | not measured | | | | | |" % (
                scenario, "{:,}".format(rows), version, len(batches), fmt(sp), fmt(sw), share))
            notes.append("`%s`: dedupsim not measured: %s" % (scenario, s))
            continue
        if s["rows"] != rows:
            notes.append("`%s` on Spark %s: Spark read %d rows, dedupsim %d" % (scenario, version, rows, s["rows"]))
        dw, dc, de = rate(s["rows"], s["wall"]), rate(s["rows"], s["cpu"]), rate(s["rows"], s["engine"])
        out.append("| `%s` | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            scenario, "{:,}".format(rows), version, len(batches), fmt(sp), fmt(sw), share,
            fmt(dw), fmt(dc), fmt(de), fmt(dw / sp), fmt(dw / sw), fmt(de / sp)))
    for version in sorted(fits):
        f = fits[version]
        if not f:
            notes.append("Spark %s: not per row: no line fitted (the data batches' rows span less than 10x, "
                         "or the slope is not positive; --scenario speed/large.yaml adds large batches)" % version)
        else:
            notes.append("Spark %s: triggerExecution = %.0f ms + %.2f us x rows (least squares over every data batch above but each query's batch 0)"
                         % (version, f[0], f[1] * 1000))
    return "\n".join(out) + "\n" + "".join("\n- " + n for n in notes) + ("\n" if notes else "")


def progress_of(export, version):
    """spark_progress of the progress file suite.py wrote for export on
    Spark version."""
    return spark_progress(os.path.join(export, "progress-spark-%s.jsonl" % version))
