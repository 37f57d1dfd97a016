#!/usr/bin/env python3
"""Runs many dedupsim exports through one Spark driver (one JVM).

    python suite.py --work DIR [--spark-conf KEY=VALUE ...] EXPORT...

Each EXPORT is a folder written by `simulate export`. Its job.py is loaded
as a module (its main() is not called) and each of its queries is run with
job.py's own run(), on a fresh checkpoint and input folder under DIR, with
job.py's SQL settings applied to the session before its queries start. The
progress records of an export go to EXPORT/progress-spark-<version>.jsonl
(replaced, never appended). One line per export goes to stdout as JSON:
{"export": ..., "spark": ..., "seconds": ..., "error": null or "...",
"skip": null or why the export cannot run on this Spark line}.

Settings that only take effect when the driver starts (spark.master,
spark.driver.memory, ...) come from --spark-conf; every spark.sql.* setting
of an export's SPARK_CONF is set on the session for that export alone.
"""

import argparse
import importlib.util
import json
import os
import shutil
import sys
import time
import traceback

from pyspark.sql import SparkSession
import pyspark


def load_job(folder, index):
    """Loads folder/job.py as a module without running its main()."""
    spec = importlib.util.spec_from_file_location("dedupsim_job_%d" % index, os.path.join(folder, "job.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Args:
    """The attributes job.py's run() reads from its parsed arguments."""

    def __init__(self, checkpoint, staging):
        self.checkpoint = checkpoint
        self.staging = staging


def run_export(spark, folder, index, work, keep):
    job = load_job(folder, index)
    if getattr(job, "TWS_QUERIES", None) and int(pyspark.__version__.split(".")[0]) < 4:
        # Not silently: the table shows the scenario on this line, and why.
        return ("transformWithState is Spark 4's (the Row API from pyspark 4.1); pyspark %s has none, "
                "so this export runs on 4.x only" % pyspark.__version__)
    batches = os.path.join(folder, "batches")
    files = sorted(os.path.join(batches, f) for f in os.listdir(batches) if f.startswith("batch-"))
    if len(files) != job.BATCHES:
        raise RuntimeError("%s holds %d batch files, job.py wants %d" % (batches, len(files), job.BATCHES))
    root = os.path.join(work, "e%04d" % index)
    shutil.rmtree(root, ignore_errors=True)
    args = Args(os.path.join(root, "checkpoints"), os.path.join(root, "input"))
    # Every SQL setting of the export, for its queries alone.
    saved = {}
    for key, value in job.SPARK_CONF.items():
        if key.startswith("spark.sql."):
            saved[key] = spark.conf.get(key, None)
            spark.conf.set(key, value)
    out = os.path.join(folder, "progress-spark-%s.jsonl" % pyspark.__version__)
    if os.path.exists(out):
        os.remove(out)
    listener = job.ProgressWriter(out)
    spark.streams.addListener(listener)
    try:
        for name, chain in job.QUERIES:
            job.run(spark, name, chain, files, args, listener)
    finally:
        spark.streams.removeListener(listener)
        listener.out.close()
        for key, value in saved.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", required=True, help="scratch folder for checkpoints and input folders")
    ap.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--keep", action="append", default=[], metavar="EXPORT",
                    help="keep this export's checkpoints, in DIR/eNNNN/checkpoints (repeatable)")
    ap.add_argument("exports", nargs="+")
    args = ap.parse_args()
    if not os.environ.get("PYSPARK_PYTHON"):
        # Python workers (transformWithState's) run on this interpreter, the venv's.
        os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = SparkSession.builder.appName("dedupsim-oracle")
    for kv in args.spark_conf:
        key, eq, value = kv.partition("=")
        if not eq:
            ap.error("--spark-conf: want KEY=VALUE, got %r" % kv)
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    failed = 0
    for i, folder in enumerate(args.exports):
        start = time.time()
        error = skip = None
        try:
            skip = run_export(spark, folder, i, args.work, folder in args.keep)
        except Exception as e:  # one export's failure is reported, the rest still run
            error = "".join(traceback.format_exception_only(type(e), e)).strip().splitlines()[0][:2000]
            failed += 1
        print(json.dumps({"export": folder, "spark": pyspark.__version__,
                          "checkpoints": os.path.join(args.work, "e%04d" % i, "checkpoints"),
                          "seconds": round(time.time() - start, 2), "error": error, "skip": skip}), flush=True)
    spark.stop()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
