#!/usr/bin/env python3
"""Checks dedupsim's batch-cost model against real Spark.

    python3 oracles/spark/costcheck.py --simulate BIN --fit PROGRESS --fit-query NAME \
        --scenario SCENARIO.yaml --measured PROGRESS [--executors 1 --cores-per-executor 2]

Fits the cost terms to one real run's progress (`simulate calibrate`), runs a
second scenario in dedupsim with those costs (its spark: block's cost
replaced, executors and cores as the local-mode driver had), and prints, per
query of that scenario, the batch durations dedupsim predicts (summary.json's
batchDurationMs, p50 and p99) beside those Spark measured for the same
scenario (durationMs.triggerExecution of its progress, its first batch, the
warm-up, left out). One JSON line per query, then a Markdown table.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile


def pct(values, q):
    values = sorted(values)
    if not values:
        return None
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--simulate", required=True)
    ap.add_argument("--fit", required=True, help="the progress of the run the costs are fitted to")
    ap.add_argument("--fit-query", required=True)
    ap.add_argument("--scenario", required=True, help="the second scenario, as exported and run on Spark")
    ap.add_argument("--measured", required=True, help="Spark's progress of the second scenario")
    ap.add_argument("--executors", type=int, default=1)
    ap.add_argument("--cores-per-executor", type=int, default=2)
    args = ap.parse_args()
    fit = subprocess.run([args.simulate, "calibrate", args.fit, "--query", args.fit_query, "--json",
                          "--executors", str(args.executors), "--cores-per-executor", str(args.cores_per_executor)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if fit.returncode != 0:
        sys.exit("costcheck: calibrate: " + fit.stderr.strip())
    fitted = json.loads(fit.stdout)
    cost = fitted["cost"]
    with open(args.scenario, encoding="utf-8") as fh:
        text = fh.read()
    if "\nspark:" not in text:
        sys.exit("costcheck: %s has no spark: block" % args.scenario)
    head, _, block = text.partition("\nspark:")
    lines = [l for l in block.splitlines() if l.strip() and not l.strip().startswith(("cost:", "executors:", "coresPerExecutor:"))]
    lines.append("  executors: %d" % args.executors)
    lines.append("  coresPerExecutor: %d" % args.cores_per_executor)
    lines.append("  cost: {%s}" % ", ".join("%s: %s" % (k, repr(float(v))) for k, v in sorted(cost.items())))
    with tempfile.TemporaryDirectory() as tmp:
        scen = os.path.join(tmp, "scenario.yaml")
        with open(scen, "w", encoding="utf-8") as fh:
            fh.write(head + "\nspark:\n" + "\n".join(lines) + "\n")
        out = os.path.join(tmp, "out")
        r = subprocess.run([args.simulate, "run", scen, "--out", out, "--quiet", "--no-report"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            sys.exit("costcheck: run: " + r.stderr.strip())
        with open(os.path.join(out, "summary.json"), encoding="utf-8") as fh:
            summary = json.load(fh)
    measured = {}
    with open(args.measured, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            d = rec.get("durationMs") or {}
            if "addBatch" not in d:
                continue
            measured.setdefault(rec["name"].split("~")[0], []).append((rec["batchId"], d["triggerExecution"]))
    rows = []
    for q in summary["queries"]:
        name = q["name"]
        got = [ms for bid, ms in sorted(measured.get(name, []))[1:]]
        pred = q.get("batchDurationMs") or {}
        row = {"query": name, "predictedP50": pred.get("p50"), "predictedP99": pred.get("p99"),
               "measuredP50": pct(got, 0.5), "measuredP99": pct(got, 0.99), "measuredBatches": len(got),
               "fit": {"query": args.fit_query, "r2": fitted.get("r2"), "batches": fitted.get("batches"), "cost": cost}}
        rows.append(row)
        print(json.dumps(row))
    print()
    print("| query | predicted p50 | measured p50 | predicted p99 | measured p99 | batches |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        f = lambda v: "-" if v is None else "%.0f ms" % v
        print("| %s | %s | %s | %s | %s | %d |" % (r["query"], f(r["predictedP50"]), f(r["measuredP50"]),
                                                   f(r["predictedP99"]), f(r["measuredP99"]), r["measuredBatches"]))


if __name__ == "__main__":
    main()
