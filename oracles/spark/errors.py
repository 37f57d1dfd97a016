#!/usr/bin/env python3
"""Runs the replay traces that dedupsim rejects on real Spark, to check that
Spark rejects them too, for the same reason.

    python errors.py --simulate BIN --work DIR [--spark-conf KEY=VALUE ...] TRACE...

For each trace: `simulate replay` must fail (its one line is kept); then the
trace runs on Spark in this driver: its rows are written as JSON lines with
neutral column names (c0, c1, ...) and renamed to the trace's names by a
projection (so that names differing only in case reach the query as they do
in Spark's own tests), the event-time column (the first withWatermark's) is
a timestamp, the query text is applied as PySpark, and each addData is one
file followed by processAllAvailable(); a restart step stops the query and
starts it again on its checkpoint. What Spark does is matched against
errors.json beside this file, keyed by the trace's file name:

  {"spark": ["TEXT", ...]}      Spark must fail, with every TEXT in its error
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

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (BooleanType, DoubleType, LongType, StringType,
                               StructField, StructType, TimestampType)
import pyspark

HERE = os.path.dirname(os.path.abspath(__file__))


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


def run_on_spark(spark, trace, work):
    """Runs trace; returns None when Spark ran every step, else its error text."""
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
        return None, "the structured query form has no PySpark text"

    def start():
        df = (spark.readStream.schema(schema).format("json")
              .option("maxFilesPerTrigger", "1").option("mode", "FAILFAST")
              .option("timestampFormat", "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX").load(inp))
        df = df.select(*[F.col("c%d" % i).alias(n) for i, (n, _) in enumerate(cols)])
        out = apply_query(df, trace["query"])
        return out.writeStream.format("noop").option("checkpointLocation", ck).start()

    step = -1
    query = None
    try:
        query = start()
        for step, s in enumerate(trace["steps"]):
            if s.get("restart"):
                query.stop()
                query = start()
                continue
            rows = s.get("addData") or []
            path = os.path.join(inp, "batch-%06d.json" % step)
            with open(path + ".tmp", "w", encoding="utf-8") as fh:
                for row in rows:
                    fh.write(json.dumps({"c%d" % i: cell(row.get(n), t) for i, (n, t) in enumerate(cols)}) + "\n")
            os.rename(path + ".tmp", path)
            query.processAllAvailable()
        query.stop()
        return None, None
    except Exception as e:
        text = "%s: %s" % (type(e).__name__, str(e))
        text = " ".join(text.split())
        where = "before it ran" if step < 0 else "at step %d" % step
        return "%s %s" % (where, text[:600]), None
    finally:
        if query is not None:
            try:
                query.stop()
            except Exception:
                pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--simulate", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("traces", nargs="+")
    args = ap.parse_args()
    with open(os.path.join(HERE, "errors.json"), encoding="utf-8") as fh:
        want = json.load(fh)
    builder = SparkSession.builder.appName("dedupsim-oracle-errors")
    for kv in args.spark_conf:
        k, _, v = kv.partition("=")
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    bad = 0
    for i, path in enumerate(args.traces):
        name = os.path.basename(path)[:-len(".json")]
        r = subprocess.run([args.simulate, "replay", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ours = (r.stderr.strip().splitlines() or [""])[-1]
        with open(path, encoding="utf-8") as fh:
            trace = json.load(fh)
        err, cannot = run_on_spark(spark, trace, os.path.join(args.work, "t%04d" % i))
        w = want.get(name)
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
        elif all(t in err for t in w["spark"]):
            verdict, detail = "same error", "Spark %s; dedupsim: %s" % (err[:300], ours[:300])
        else:
            verdict, detail = "FAILED", "Spark failed otherwise than errors.json says (%s): %s" % (w["spark"], err)
        bad += verdict not in ("same error", "documented difference")
        print(json.dumps({"case": path, "verdict": verdict, "detail": detail, "spark": pyspark.__version__}), flush=True)
    spark.stop()
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
