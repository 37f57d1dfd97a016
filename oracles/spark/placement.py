#!/usr/bin/env python3
"""Checks where Spark keeps each key against where dedupsim says it does.

    python placement.py --checkpoint SPARK_QUERY_CHECKPOINT --expected STATE_JSON

Reads a query checkpoint written by real Spark with Spark's state data
source (spark.read.format("statestore"), Spark 4) and compares every key
of operator 0 and its partition with `simulate state --format json
--limit -1` of dedupsim's run of the same scenario (STATE_JSON, one
query). Prints one JSON line {"verdict", "detail"}; exit 1 when they
differ.
"""

import argparse
import json
import sys

from pyspark.sql import SparkSession


def norm(v):
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--expected", required=True)
    ap.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()
    with open(args.expected, encoding="utf-8") as fh:
        state = json.load(fh)
    op = state["queries"][0]["operators"][0]
    cols = op["keyColumns"]
    want = {tuple(r["key"][c] for c in cols): r["partition"] for r in op["rows"]}
    builder = SparkSession.builder.appName("dedupsim-oracle-placement")
    for kv in args.spark_conf:
        k, _, v = kv.partition("=")
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.read.format("statestore").option("operatorId", 0).load(args.checkpoint)
    got = {}
    for row in df.select("key", "partition_id").collect():
        key = tuple(norm(row["key"][c]) for c in cols)
        got[key] = row["partition_id"]
    spark.stop()
    wrong = [(k, want.get(k), p) for k, p in got.items() if want.get(k) != p]
    missing = [k for k in want if k not in got]
    if not wrong and not missing and got:
        print(json.dumps({"verdict": "equal", "detail": "%d keys, each in the partition dedupsim says" % len(got)}))
        return
    detail = "%d keys in Spark, %d in dedupsim; %d in another partition (first: %s), %d missing in Spark" % (
        len(got), len(want), len(wrong), wrong[:1], len(missing))
    print(json.dumps({"verdict": "DIFFERENT", "detail": detail}))
    sys.exit(1)


if __name__ == "__main__":
    main()
