#!/usr/bin/env python3
"""The real-Spark suite: every replay case and the oracle scenarios, run on
real Spark and compared with dedupsim's prediction.

    python3 oracles/spark/oracle.py --simulate BIN --work DIR --venv VENV [--venv VENV ...]

For every replay case of sim/spark/replay/testdata (conformance/ and cases/) and
every scenario of oracles/spark/scenarios/: `simulate export` writes the
batch files, job.py and dedupsim's prediction; suite.py runs every export
in one Spark driver per venv (one per Spark line); `simulate compare`
judges each. The error cases, and the traces export cannot turn into files,
run through traces.py instead, straight from their JSON: an error case must
fail on Spark as in dedupsim; any other trace must give its expected file. Prints one table row per case and Spark version,
writes the table as Markdown to DIR/table.md and exits 1 when any case
differs or could not run: nothing is skipped.

Beside the verdicts, it measures the rows per second of Spark local mode on
each scenario's export and of `simulate run` on the same scenario, and
writes them to DIR/speed.md (speed.py has the definitions). The speed table
never changes a verdict or the exit status.
"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # importing speed.py leaves no __pycache__ in the tree
import speed  # noqa: E402  (after the line above)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CASE_DIRS = ["sim/spark/replay/testdata/conformance", "sim/spark/replay/testdata/cases"]
# Traces that run in a Spark driver of their own, so that whatever they do
# to it cannot touch the others: 257 dedup operators in one query.
ISOLATED = {"own-error-more-than-255-dedups"}

# The expected errors of the error cases (errors.json), for the checks made
# here: an isolated case's driverLog.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "errors.json"), encoding="utf-8") as _fh:
    ERRORS = json.load(_fh)

# Driver settings for determinism and speed on a small machine: local mode,
# loopback only, no UI, no console progress, a small driver heap.
SPARK_CONF = [
    "spark.master=local[2]",
    "spark.ui.enabled=false",
    "spark.ui.showConsoleProgress=false",
    "spark.driver.host=127.0.0.1",
    "spark.driver.bindAddress=127.0.0.1",
    "spark.driver.memory=2g",
    "spark.sql.streaming.stateStore.maintenanceInterval=600s",
    "spark.scheduler.listenerbus.eventqueue.capacity=100000",
    "spark.sql.session.timeZone=UTC",
]


def cases():
    """Yields (name, path, is_error) for every replay case."""
    for d in CASE_DIRS:
        for f in sorted(os.listdir(os.path.join(ROOT, d))):
            if not f.endswith(".json"):
                continue
            path = os.path.join(ROOT, d, f)
            expected = path[:-len(".json")] + ".expected.jsonl"
            if not os.path.exists(expected):
                continue
            with open(expected, encoding="utf-8") as fh:
                lines = [l for l in fh.read().splitlines() if l.strip()]
            is_error = len(lines) == 1 and json.loads(lines[0]) == {"error": True}
            yield f[:-len(".json")], path, is_error


def scenarios(only, extra):
    """Yields (name, path) for the scenarios of scenarios/ that --only keeps,
    then for every --scenario file."""
    d = os.path.join(HERE, "scenarios")
    for f in sorted(os.listdir(d)):
        if f.endswith(".yaml") and wanted(only, f[:-len(".yaml")]):
            yield f[:-len(".yaml")], os.path.join(d, f)
    for path in extra:
        yield os.path.splitext(os.path.basename(path))[0], os.path.abspath(path)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def spark_env(work):
    env = dict(os.environ)
    env.pop("SPARK_HOME", None)
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env["PYSPARK_PYTHON"] = env.get("PYSPARK_PYTHON", "")
    tmp = os.path.join(work, "tmp")
    os.makedirs(tmp, exist_ok=True)
    env["TMPDIR"] = tmp
    env["TZ"] = "UTC"
    return env


def check_placement(simulate, py, work, name, rec, env):
    """Runs the scenario in dedupsim with a checkpoint, reads its state with
    `simulate state`, and has placement.py compare it with the checkpoint
    Spark wrote (its state data source). Returns (verdict, detail)."""
    path = os.path.join(HERE, "scenarios", name + ".yaml")
    base = os.path.join(work, "placement")
    ck, out = os.path.join(base, "checkpoint"), os.path.join(base, "results")
    if not os.path.isdir(base):
        os.makedirs(base)
        r = run([simulate, "run", path, "--checkpoint", ck, "--out", out, "--quiet", "--no-report"])
        if r.returncode != 0:
            return "FAILED", "simulate run: " + r.stderr.strip()[-300:]
        r = run([simulate, "state", ck, "--format", "json", "--limit", "-1"])
        if r.returncode != 0:
            return "FAILED", "simulate state: " + r.stderr.strip()[-300:]
        with open(os.path.join(base, "state.json"), "w") as fh:
            fh.write(r.stdout)
    with open(os.path.join(base, "state.json")) as fh:
        query = json.load(fh)["queries"][0]["name"]
    r = run([py, os.path.join(HERE, "placement.py"), "--checkpoint", os.path.join(rec["checkpoints"], query),
             "--expected", os.path.join(base, "state.json")] + sum([["--spark-conf", c] for c in SPARK_CONF], []), env=env)
    try:
        res = json.loads(r.stdout.strip().splitlines()[-1])
        return res["verdict"], res["detail"]
    except (ValueError, IndexError):
        return "FAILED", "placement.py: " + (r.stderr.strip().splitlines() or ["no output"])[-1][:300]


def wanted(only, name):
    """Whether --only (comma-separated parts, any of which may match) keeps name."""
    return not only or any(part and part in name for part in only.split(","))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--simulate", required=True, help="the simulate binary")
    ap.add_argument("--work", required=True, help="a scratch folder (created; its exports are replaced)")
    ap.add_argument("--venv", action="append", required=True, help="a venv with one pyspark (repeatable)")
    ap.add_argument("--only", default="", help="run only the cases and scenarios whose name contains this (several: comma-separated)")
    ap.add_argument("--scenario", action="append", default=[], metavar="FILE",
                    help="also run this scenario file, whatever --only says (repeatable; e.g. speed/large.yaml)")
    args = ap.parse_args()
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    rows = []  # (kind, name, version, verdict, detail)
    exports, errors = [], []
    t0 = time.time()
    files = 0  # the case and scenario files asked for: each must run on every Spark line
    for name, path, is_error in cases():
        if not wanted(args.only, name):
            continue
        files += 1
        if is_error:
            errors.append((name, path))
            continue
        out = os.path.join(work, "exports", "case-" + name)
        r = run([args.simulate, "export", path, "--out", out])
        if r.returncode != 0:
            errors.append((name, path))  # not exportable: run straight from its JSON
            continue
        exports.append(("case", name, out))
    for name, path in scenarios(args.only, args.scenario):
        files += 1
        out = os.path.join(work, "exports", "scenario-" + name)
        r = run([args.simulate, "export", path, "--out", out])
        if r.returncode != 0:
            rows.append(("scenario", name, "all", "not run", r.stderr.strip().splitlines()[-1] if r.stderr else "export failed"))
            continue
        exports.append(("scenario", name, out))
    print("oracle: %d exports, %d error cases, exported in %.0f s" % (len(exports), len(errors), time.time() - t0), flush=True)
    # dedupsim's own speed on each scenario, before any Spark driver runs.
    sims, measures, fits = {}, [], {}
    scenario_paths = dict(scenarios(args.only, args.scenario))
    for kind, name, out in exports:
        if kind != "scenario":
            continue
        try:
            sims[name] = speed.simulator(args.simulate, scenario_paths[name], os.path.join(work, "speed-sim"))
        except (RuntimeError, OSError, ValueError, KeyError) as e:
            sims[name] = str(e)
    env = spark_env(work)
    for venv in args.venv:
        py = os.path.join(venv, "bin", "python")
        version = run([py, "-c", "import pyspark; print(pyspark.__version__)"]).stdout.strip()
        t1 = time.time()
        cmd = [py, os.path.join(HERE, "suite.py"), "--work", os.path.join(work, "spark-" + version)]
        for c in SPARK_CONF:
            cmd += ["--spark-conf", c]
        cmd += [e[2] for e in exports]
        placement = [e for e in exports if e[0] == "scenario" and e[1] == "placement"]
        for e in placement:
            cmd += ["--keep", e[2]]
        log = open(os.path.join(work, "spark-%s.log" % version), "w")
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
        by_out = {e[2]: e for e in exports}
        done = set()

        def judge(kind, name, out, rec):
            """Compares one export's progress and prints its verdict at once."""
            if rec.get("skip"):
                # A transformWithState scenario on pyspark 3.5 (suite.py says why).
                rows.append((kind, name, version, "not on this Spark line", rec["skip"]))
                print("oracle: %s %s: not on this Spark line" % (name, version), flush=True)
                return
            if rec["error"]:
                rows.append((kind, name, version, "FAILED", "Spark: " + rec["error"]))
                print("oracle: %s %s: FAILED" % (name, version), flush=True)
                return
            r = run([args.simulate, "compare", os.path.join(out, "expected"),
                     os.path.join(out, "progress-spark-%s.jsonl" % version)])
            first = (r.stdout.strip().splitlines() or [r.stderr.strip()])[0]
            verdict = "equal" if r.returncode == 0 else "DIFFERENT"
            rows.append((kind, name, version, verdict, first + " (%.1f s)" % rec["seconds"]))
            if kind == "scenario":
                try:
                    n, ms, batches = speed.progress_of(out, version)
                    measures.append((name, version, n, ms, rec["seconds"], batches))
                except (OSError, ValueError) as e:
                    print("oracle: speed of %s on Spark %s not measured: %s" % (name, version, e), flush=True)
            print("oracle: %s %s: %s (%.1f s)" % (name, version, verdict, rec["seconds"]), flush=True)
            # The state data source (format "statestore") is Spark 4's.
            if (kind, name, out) in placement and int(version.split(".")[0]) >= 4:
                rows.append(("state placement", name, version) + check_placement(args.simulate, py, work, name, rec, env))

        # Each export is judged as soon as the driver reports it, so that
        # the log shows a line per case while the suite runs.
        for line in p.stdout:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            e = by_out.get(rec.get("export"))
            if e is None or e[2] in done:
                continue
            done.add(e[2])
            judge(e[0], e[1], e[2], rec)
        p.wait()
        for kind, name, out in exports:
            if out not in done:
                rows.append((kind, name, version, "not run", "the Spark driver ended before it (see %s)" % log.name))
                print("oracle: %s %s: not run" % (name, version), flush=True)
        if errors:
            groups = [[path for name, path in errors if name not in ISOLATED]]
            groups += [[path] for name, path in errors if name in ISOLATED]
            seen = {}
            for g, paths in enumerate(groups):
                if not paths:
                    continue
                cmd = [py, os.path.join(HERE, "traces.py"), "--simulate", args.simulate,
                       "--work", os.path.join(work, "traces-%s-%d" % (version, g))]
                for c in SPARK_CONF:
                    cmd += ["--spark-conf", c]
                cmd += paths
                # An isolated case's driver logs to a file of its own, which
                # its errors.json driverLog must be found in.
                glog = log if g == 0 else open(os.path.join(work, "traces-%s-%d.log" % (version, g)), "w+")
                p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=glog, text=True, env=env)
                got = []
                for line in p.stdout:
                    try:
                        rec = json.loads(line)
                    except ValueError:
                        continue
                    got.append(rec)
                    if g == 0:
                        seen[rec["case"]] = rec
                        names = [n for n, q in errors if q == rec["case"]]
                        if names:
                            print("oracle: %s %s: %s" % (names[0], version, rec["verdict"]), flush=True)
                p.wait()
                for rec in got if g > 0 else []:
                    name = os.path.basename(rec["case"])[:-len(".json")]
                    need = ERRORS.get(name, {}).get("driverLog")
                    if need and rec["verdict"] == "same error":
                        glog.flush()
                        glog.seek(0)
                        if need not in glog.read():
                            rec["verdict"] = "FAILED"
                            rec["detail"] = "the driver ended without %s in its log (%s): a dead driver is not the expected error; %s" % (need, glog.name, rec["detail"])
                    seen[rec["case"]] = rec
                    print("oracle: %s %s: %s" % (name, version, rec["verdict"]), flush=True)
            for name, path in errors:
                rec = seen.get(path)
                if rec is None:
                    rows.append(("case", name, version, "not run", "the Spark driver ended before it"))
                else:
                    rows.append(("case", name, version, rec["verdict"], rec["detail"]))
        print("oracle: Spark %s: %.0f s" % (version, time.time() - t1), flush=True)
    for version in sorted({m[1] for m in measures}):
        fits[version] = speed.fit([b for m in measures if m[1] == version for b in m[5]])
    if measures:
        order = [e[1] for e in exports]
        measures.sort(key=lambda m: (order.index(m[0]), m[1]))
        text = speed.table(measures, sims, fits)
        with open(os.path.join(work, "speed.md"), "w") as fh:
            fh.write(text)
        print(text, flush=True)
    # "not on this Spark line": a transformWithState case or scenario on
    # pyspark 3.5, which has no transformWithState (traces.py or suite.py
    # says so in its row).
    bad = [r for r in rows if r[3] not in ("equal", "same error", "documented difference", "not on this Spark line")]
    if not rows:
        bad = [("none", "no case ran", "", "FAILED", "")]
    table = ["| kind | case | Spark | verdict | detail |", "|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r[0], r[1], r[2])):
        table.append("| %s | `%s` | %s | %s | %s |" % (r[0], r[1], r[2], r[3], r[4].replace("|", "\\|")))
    with open(os.path.join(work, "table.md"), "w") as fh:
        fh.write("\n".join(table) + "\n")
    print("\n".join(table))
    print("oracle: %d passed, %d failed (%.0f s)" % (len(rows) - len(bad), len(bad), time.time() - t0))
    # Every case and scenario file must have run on every Spark line (a python that exits 0
    # without running anything must not pass): count the verdicts of runs that happened.
    ran = sum(1 for r in rows if r[0] in ("case", "scenario") and r[3] != "not run")
    want = files * len(args.venv)
    print("oracle: ran %d of %d (%d case and scenario files on %d Spark lines)" % (ran, want, files, len(args.venv)))
    if ran == 0 or ran < want:
        print("oracle: FAIL: ran %d of %d" % (ran, want))
        sys.exit(1)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
