#!/usr/bin/env python3
"""Runs replay traces on real Spark straight from their JSON, for the traces
`simulate export` cannot turn into files: the error cases, and traces whose
columns Spark's file source refuses (names differing only in case).

    python traces.py --simulate BIN --work DIR [--spark-conf KEY=VALUE ...] TRACE...

An error case (its expected file is {"error": true}) must fail in
`simulate replay` and on Spark, for the same reason. Any other trace must
give, batch by batch, the counters of its expected file (hand-derived; the
fields of the conformance format that Spark reports: batchId, numInputRows,
eventTime.watermark, each operator's name and counters, and the emitted
rows, collected with foreachBatch).

Each trace runs on Spark in this driver: its rows are written as JSON lines with
neutral column names (c0, c1, ...) and renamed to the trace's names by a
projection (so that names differing only in case reach the query as they do
in Spark's own tests), the event-time column (the first withWatermark's) is
a timestamp, the query text is applied as PySpark, and each addData is one
file followed by processAllAvailable(); a restart step stops the query and
starts it again on its checkpoint. What Spark does is matched against
errors.json beside this file, keyed by the trace's file name:

  {"spark": ["TEXT", ...]}      Spark must fail, with every TEXT in its error
  {"spark": [["TEXT", ...], ...]}  ... with every TEXT of one of the lists
  {"sparkRuns": "WHY"}          Spark runs the trace; dedupsim refuses it for
                                the reason given (a limit of its own)

One JSON line per trace on stdout: {"case", "verdict", "detail"}.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (BooleanType, DoubleType, LongType, StringType,
                               StructField, StructType, TimestampType)
import pyspark

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # importing twsdedup.py leaves no __pycache__ in the tree
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"


def spark_major():
    return int(pyspark.__version__.split(".")[0])


def is_tws(trace):
    return isinstance(trace.get("query"), str) and "transformWithState" in trace["query"]


def event_time_column(trace):
    if trace.get("eventTime"):
        return trace["eventTime"]
    q = trace["query"] if isinstance(trace["query"], str) else ""
    m = re.search(r'withWatermark\(\s*"([^"]*)"', q)
    return m.group(1) if m else None


def columns(trace, et):
    """The trace's columns in order of first appearance, with a Spark type each."""
    names, types = [], {}
    for step in trace["steps"]:
        for row in step.get("addData") or []:
            for k, v in row.items():
                if k not in types:
                    names.append(k)
                    types[k] = None
                if types[k] is None and v is not None:
                    if k == et:
                        types[k] = TimestampType()
                    elif isinstance(v, bool):
                        types[k] = BooleanType()
                    elif isinstance(v, int):
                        types[k] = LongType()
                    elif isinstance(v, float):
                        types[k] = DoubleType()
                    else:
                        types[k] = StringType()
    return [(n, types[n] or StringType()) for n in names]


def cell(v, t):
    if isinstance(t, TimestampType) and isinstance(v, (int, float)) and not isinstance(v, bool):
        return (datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
                + datetime.timedelta(microseconds=round(v * 1e6))).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(t, StringType) and isinstance(v, (dict, list)):
        return json.dumps(v)
    return v


def apply_query(df, text):
    text = text.strip()
    for prefix in ("df.", "events."):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return eval("df." + text, {"F": F}, {"df": df})


class Collector:
    """Collects the progress records of the running query (a listener)."""

    def __init__(self):
        self.records = []

    def listener(self):
        from pyspark.sql.streaming import StreamingQueryListener
        outer = self

        class L(StreamingQueryListener):
            def onQueryStarted(self, event):
                pass

            def onQueryProgress(self, event):
                outer.records.append(json.loads(event.progress.json))

            def onQueryIdle(self, event):
                pass

            def onQueryTerminated(self, event):
                pass

        return L()


def run_on_spark(spark, trace, work, collect):
    """Runs trace. Returns (error, cannot, batches): Spark's error text or
    None; why it cannot run or None; and, with collect, the progress
    records of the executed batches, each with the rows it emitted."""
    et = event_time_column(trace)
    cols = columns(trace, et)
    schema = StructType([StructField("c%d" % i, t) for i, (_, t) in enumerate(cols)])
    shutil.rmtree(work, ignore_errors=True)
    inp, ck = os.path.join(work, "input"), os.path.join(work, "checkpoint")
    os.makedirs(inp)
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled",
                   "false" if trace.get("noDataMicroBatches") is False else "true")
    spark.conf.set("spark.sql.shuffle.partitions", str(trace.get("shufflePartitions", 1)))
    if not isinstance(trace["query"], str):
        return None, "the structured query form has no PySpark text", None
    kinds = {}
    for st in trace["steps"]:
        for row in st.get("addData") or []:
            for k, v in row.items():
                if v is not None:
                    kinds.setdefault(k, set()).add("bool" if isinstance(v, bool) else "number" if isinstance(v, (int, float)) else type(v).__name__)
    mixed = sorted(k for k, ks in kinds.items() if len(ks) > 1 and k != et)
    if mixed:
        return None, "column %s holds values of several kinds; a Spark column has one type" % mixed[0], None
    rows = {}
    tws = is_tws(trace)
    if tws:
        # transformWithState runs on the RocksDB state store only.
        spark.conf.set("spark.sql.streaming.stateStore.providerClass", ROCKSDB)
    else:
        spark.conf.unset("spark.sql.streaming.stateStore.providerClass")

    def sink(df, batch_id):
        rows[batch_id] = [r.asDict() for r in df.collect()]

    def start(once=False):
        df = (spark.readStream.schema(schema).format("json")
              .option("maxFilesPerTrigger", "1").option("mode", "FAILFAST")
              .option("timestampFormat", "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX").load(inp))
        df = df.select(*[F.col("c%d" % i).alias(n) for i, (n, _) in enumerate(cols)])
        if tws:
            import twsdedup
            out = twsdedup.apply(spark, df, trace["query"])
        else:
            out = apply_query(df, trace["query"])
        w = out.writeStream.option("checkpointLocation", ck)
        w = w.foreachBatch(sink) if collect else w.format("noop")
        if once:
            w = w.trigger(once=True)
        return w.start()

    def write(step, batch):
        path = os.path.join(inp, "batch-%06d.json" % step)
        # Written under a hidden name (Spark's file source skips names
        # starting with "." or "_"), then renamed: a listing between the
        # two never sees the file twice.
        tmp = os.path.join(inp, ".batch-%06d.json.tmp" % step)
        with open(tmp, "w", encoding="utf-8") as fh:
            for row in batch:
                fh.write(json.dumps({"c%d" % i: cell(row.get(n), t) for i, (n, t) in enumerate(cols)}) + "\n")
        os.rename(tmp, path)

    collector = Collector()
    listener = collector.listener()
    spark.streams.addListener(listener)
    step = -1
    query = None
    try:
        # An event-time transformWithState runs like any watermarked query:
        # its no-data batches follow the watermark, so processAllAvailable
        # returns. In processing time it never idles (tws_drive).
        clocked = tws and not trace["query"].count("EventTime")
        if clocked:
            cannot = tws_drive(trace, start, write, ck)
            if cannot:
                return None, cannot, None
        else:
            query = start()
        if clocked:
            pass
        elif trace.get("manualClock"):
            query = manual_clock(trace, query, start, write)
        else:
            for step, s in enumerate(trace["steps"]):
                if s.get("restart"):
                    query.stop()
                    query = start()
                    continue
                write(step, s.get("addData") or [])
                query.processAllAvailable()
        if query is not None:
            query.stop()
        query = None
        deadline = time.time() + 60
        while time.time() < deadline and len(collector.records) < len(rows):
            time.sleep(0.1)
        time.sleep(0.5)
        batches = [r for r in collector.records if "addBatch" in (r.get("durationMs") or {})]
        for r in batches:
            r["rows"] = rows.get(r["batchId"], [])
        return None, None, batches
    except Exception as e:
        text = "%s: %s" % (type(e).__name__, str(e))
        text = " ".join(text.split())
        where = "before it ran" if step < 0 else "at step %d" % step
        return "%s %s" % (where, text[:600]), None, None
    finally:
        if query is not None:
            try:
                query.stop()
            except Exception:
                pass
        try:
            spark.streams.removeListener(listener)
        except Exception:  # the driver may be gone with the query
            pass


def manual_clock(trace, query, start, write):
    """Drives a manual-clock trace with files. A trigger that finds rows
    made available since the last batch runs a data batch of them; one
    that finds none runs the no-data batch Spark decides on, or nothing.
    With processAllAvailable() after each file, Spark would run that no-data
    batch at once, before the next trigger: right only when the next
    trigger finds no rows. So a data trigger followed by an empty trigger
    is a file and processAllAvailable(); a data trigger followed by another
    data trigger, a restart or the end of the trace is a file consumed by
    a query started with Trigger.Once, which runs that one batch and stops
    (a stop and a start change nothing when data follows: the late filter
    lags the same way). Returns the running query."""
    steps = trace["steps"]
    pending = []
    events = []  # ("data", step, rows) | ("empty", step) | ("restart", step)
    for i, st in enumerate(steps):
        if st.get("restart"):
            events.append(("restart", i, None))
        elif st.get("advanceManualClock"):
            events.append(("data", i, pending) if pending else ("empty", i, None))
            pending = []
        else:
            pending = pending + list(st.get("addData") or [])
    for j, (kind, i, rows) in enumerate(events):
        if kind == "restart":
            query.stop()
            query = start()
        elif kind == "empty":
            query.processAllAvailable()
        else:
            follows = events[j + 1][0] if j + 1 < len(events) else "end"
            if follows == "empty":
                write(i, rows)
                query.processAllAvailable()
            else:
                query.stop()
                write(i, rows)
                once = start(once=True)
                once.awaitTermination()
                query = start()
    return query


def tws_drive(trace, start, write, ck):
    """Drives a transformWithState trace (manual clock) on the wall clock.
    In processing time Spark runs a batch at every trigger
    (shouldRunAnotherBatch is always true), so processAllAvailable() never
    returns and a running query's no-data batches cannot be placed; each
    trigger is instead a query started with Trigger.Once on the
    checkpoint, which runs exactly one batch, at the wall-clock time the
    trace's clock gives (relative to the first trigger): the batch
    timestamp a TTL reads. A trigger without rows would be a no-data batch
    in the running query, which a Trigger.Once start does not run; such a
    trace, and one with a restart, cannot run here (returns why)."""
    pending, clock, t0 = [], 0.0, None
    plan = []
    for i, st in enumerate(trace["steps"]):
        if st.get("restart"):
            return "a restart step: each trigger here is already a fresh start of the query"
        if "advanceManualClock" in st:
            adv = st["advanceManualClock"]
            if adv is True:
                adv = trace.get("triggerInterval", "0 seconds")
            clock += interval_seconds(adv)
            if not pending:
                return "step %d: a trigger without rows runs a no-data batch, which Trigger.Once cannot run" % i
            plan.append((i, clock, pending))
            pending = []
        else:
            pending = pending + list(st.get("addData") or [])
    for i, at, batch in plan:
        if t0 is not None:
            wait = t0 + at - time.time()
            if wait > 0:
                time.sleep(wait)
        write(i, batch)
        q = start(once=True)
        q.awaitTermination()
        if t0 is None:
            # The clock's origin is the first batch's own timestamp (the
            # offset log's batchTimestampMs), not the start call: starting
            # a query can take many seconds on a loaded machine.
            t0 = last_batch_timestamp(ck) - at
    return None


def last_batch_timestamp(ck):
    """The batchTimestampMs of the newest offset-log entry, in seconds."""
    d = os.path.join(ck, "offsets")
    n = max(int(f) for f in os.listdir(d) if f.isdigit())
    with open(os.path.join(d, str(n)), encoding="utf-8") as fh:
        meta = json.loads(fh.read().splitlines()[1])
    return meta["batchTimestampMs"] / 1000.0


def interval_seconds(text):
    """A trace's Spark interval ("20 seconds", "1 minute") in seconds:
    the forms the TWS cases use."""
    units = {"millisecond": 0.001, "second": 1, "minute": 60, "hour": 3600, "day": 86400}
    words = text.replace("interval", "").split()
    total = 0.0
    for n, u in zip(words[0::2], words[1::2]):
        total += float(n) * units[u.rstrip("s")]
    return total


def micros(v):
    """An event time as given in a trace (seconds or RFC 3339), or as Spark
    returns it (a naive UTC datetime), in microseconds."""
    if isinstance(v, datetime.datetime):
        return round((v.replace(tzinfo=datetime.timezone.utc) - EPOCH).total_seconds() * 1e6)
    if isinstance(v, str):
        return round((datetime.datetime.fromisoformat(v.replace("Z", "+00:00")) - EPOCH).total_seconds() * 1e6)
    return round(v * 1e6)


EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def canon_row(row, et):
    return tuple(sorted((k, ("t", micros(v)) if k == et and v is not None else ("v", json.dumps(v, sort_keys=True)))
                        for k, v in row.items()))


def compare(expected, got, et):
    """The first difference between the expected batches and Spark's, or None."""
    if len(expected) != len(got):
        return "%d batches expected, Spark ran %d" % (len(expected), len(got))
    for e, g in zip(expected, got):
        where = "batch %s" % e.get("batchId")
        no_data = all(s.get("startOffset") == s.get("endOffset") for s in g.get("sources", [])) and g["numInputRows"] == 0
        checks = [("batchId", e.get("batchId"), g.get("batchId")),
                  ("numInputRows", e.get("numInputRows"), g.get("numInputRows")),
                  ("noData", e.get("noData"), no_data),
                  ("eventTime.watermark", (e.get("eventTime") or {}).get("watermark"), (g.get("eventTime") or {}).get("watermark"))]
        for field, want, have in checks:
            if want != have:
                return "%s: %s %s expected, Spark %s" % (where, field, want, have)
        eops, gops = e.get("stateOperators", []), g.get("stateOperators", [])
        if len(eops) != len(gops):
            return "%s: %d state operators expected, Spark %d" % (where, len(eops), len(gops))
        for i, (eo, go) in enumerate(zip(eops, gops)):
            for k, want in eo.items():
                have = go.get(k) if k != "customMetrics" else None
                if k == "customMetrics":
                    for ck, cw in want.items():
                        if (go.get("customMetrics") or {}).get(ck) != cw:
                            return "%s: stateOperators[%d].customMetrics.%s %s expected, Spark %s" % (
                                where, i, ck, cw, (go.get("customMetrics") or {}).get(ck))
                elif want != have:
                    return "%s: stateOperators[%d].%s %s expected, Spark %s" % (where, i, k, want, have)
        if "rows" in e:
            want = sorted(canon_row(r, et) for r in e["rows"])
            have = sorted(canon_row(r, et) for r in g["rows"])
            if want != have:
                return "%s: rows %s expected, Spark emitted %s" % (where, e["rows"], g["rows"])
    return None


def spark_matches(err, want):
    """Whether Spark's error text holds every TEXT of want, or, when want is
    a list of such lists, every TEXT of one of them (a failure that shows
    in more than one way, such as a driver that dies)."""
    if want and all(isinstance(w, list) for w in want):
        return any(all(t in err for t in alt) for alt in want)
    return all(t in err for t in want)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--simulate", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("traces", nargs="+")
    args = ap.parse_args()
    with open(os.path.join(HERE, "errors.json"), encoding="utf-8") as fh:
        want = json.load(fh)
    if not os.environ.get("PYSPARK_PYTHON"):
        # Python workers (transformWithState's) run on this interpreter, the venv's.
        os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = SparkSession.builder.appName("dedupsim-oracle-errors")
    for kv in args.spark_conf:
        k, _, v = kv.partition("=")
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    bad = 0
    for i, path in enumerate(args.traces):
        name = os.path.basename(path)[:-len(".json")]
        with open(path, encoding="utf-8") as fh:
            trace = json.load(fh)
        with open(path[:-len(".json")] + ".expected.jsonl", encoding="utf-8") as fh:
            expected = [json.loads(l) for l in fh if l.strip()]
        is_error = expected == [{"error": True}]
        if is_tws(trace) and spark_major() < 4:
            # Not silently: the table shows the case on this line, and why.
            print(json.dumps({"case": path, "verdict": "not on this Spark line",
                              "detail": "transformWithState is Spark 4's (the Row API from pyspark 4.1); pyspark %s has none, so this case runs on 4.x only" % pyspark.__version__,
                              "spark": pyspark.__version__}), flush=True)
            continue
        if not is_error:
            err, cannot, batches = run_on_spark(spark, trace, os.path.join(args.work, "t%04d" % i), True)
            w = want.get(name)
            if cannot:
                if w and "notSpark" in w:
                    verdict, detail = "documented difference", w["notSpark"]
                else:
                    verdict, detail = "not run", cannot
            elif err:
                verdict, detail = "FAILED", "Spark failed: " + err
            else:
                diff = compare(expected, batches, event_time_column(trace))
                verdict, detail = ("equal", "%d batches, as the expected file" % len(batches)) if diff is None else ("DIFFERENT", diff)
                if is_tws(trace) and batches:
                    # The wall-clock batch timestamps a TTL read, for the reader
                    # to check against the trace's clock.
                    ts = [datetime.datetime.fromisoformat(b["timestamp"].replace("Z", "+00:00")).timestamp() for b in batches]
                    detail += "; batch timestamps %s s after batch 0" % ", ".join("+%.1f" % (x - ts[0]) for x in ts)
            bad += verdict not in ("equal", "documented difference")
            print(json.dumps({"case": path, "verdict": verdict, "detail": detail, "spark": pyspark.__version__}), flush=True)
            continue
        r = subprocess.run([args.simulate, "replay", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ours = (r.stderr.strip().splitlines() or [""])[-1]
        w = want.get(name)
        if w and "driverLog" in w:
            # The caller checks the driver's log (stderr) for this case's
            # error: Spark must log it (ERROR is enough for an uncaught
            # exception in a task thread).
            spark.sparkContext.setLogLevel("ERROR")
        err, cannot, _ = run_on_spark(spark, trace, os.path.join(args.work, "t%04d" % i), False)
        if r.returncode == 0 or r.stdout.strip():
            verdict, detail = "FAILED", "dedupsim ran the trace (exit 0 or batches printed)"
        elif cannot:
            verdict, detail = "not run", cannot
        elif w is None:
            verdict, detail = "FAILED", "no entry in errors.json; Spark: %s" % (err or "ran every step")
        elif "sparkRuns" in w:
            if err is None:
                verdict, detail = "documented difference", "Spark runs it; dedupsim refuses it: " + w["sparkRuns"]
            else:
                verdict, detail = "FAILED", "errors.json says Spark runs it, but Spark: " + err
        elif err is None:
            verdict, detail = "FAILED", "Spark ran every step; dedupsim: " + ours
        elif spark_matches(err, w["spark"]) and all(t in ours for t in w.get("dedupsim", [])):
            verdict, detail = "same error", "Spark %s; dedupsim: %s" % (err[:300], ours[:300])
        else:
            verdict, detail = "FAILED", "Spark or dedupsim failed otherwise than errors.json says (%s): Spark %s; dedupsim: %s" % (w, err, ours)
        bad += verdict not in ("same error", "documented difference")
        print(json.dumps({"case": path, "verdict": verdict, "detail": detail, "spark": pyspark.__version__}), flush=True)
    spark.stop()
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
