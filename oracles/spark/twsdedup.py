"""The dedup processor people write with Spark 4's transformWithState
(pyspark 4.1+, the Row API), as dedupsim models it: one ValueState per
grouping key, with a TTL in processing time or none; the first row of a
key whose state does not exist is emitted and sets the state, every other
row is dropped while the state exists.

    df.groupBy("id").transformWithState(DedupProcessor(ttl="10 minutes"))

is dedupsim's query text; apply() turns it into the PySpark call
(outputStructType = the input's schema, outputMode "Append", timeMode
"ProcessingTime"). pyspark 3.5 has no transformWithState: importing this
module there fails, and the suite says so instead of running the case.
"""

import sys

from pyspark import cloudpickle
from pyspark.sql.streaming import StatefulProcessor
from pyspark.sql.types import LongType, StructField, StructType

# Spark's Python workers cannot import this file: ship its classes by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


class _Dedup(StatefulProcessor):
    """The processor itself."""

    def __init__(self, ttl_ms):
        self.ttl_ms = ttl_ms

    def init(self, handle):
        schema = StructType([StructField("seen", LongType())])
        if self.ttl_ms:
            self.seen = handle.getValueState("seen", schema, self.ttl_ms)
        else:
            self.seen = handle.getValueState("seen", schema)

    def handleInputRows(self, key, rows, timerValues):
        if self.seen.exists():
            return
        first = next(rows, None)
        if first is not None:
            self.seen.update((1,))
            yield first

    def close(self):
        pass


class _Grouped:
    def __init__(self, df, keys):
        self.df, self.keys = df, keys

    def transformWithState(self, processor, outputStructType=None, outputMode="Append", timeMode="ProcessingTime"):
        return self.df.groupBy(*self.keys).transformWithState(
            processor, outputStructType or self.df.schema, outputMode, timeMode)

    transformWithStateInPandas = transformWithState


class _Frame:
    def __init__(self, df):
        self.df = df

    def groupBy(self, *keys):
        flat = []
        for k in keys:
            flat.extend(k if isinstance(k, (list, tuple)) else [k])
        return _Grouped(self.df, flat)


def ttl_ms(spark, text):
    """A Spark interval ("30 seconds") in milliseconds, as Spark reads it."""
    td = spark.sql("SELECT INTERVAL '%s'" % text.replace("'", "")).collect()[0][0]
    return int(round(td.total_seconds() * 1000))


def apply(spark, df, text):
    """Applies dedupsim's transformWithState query text to df."""
    text = text.strip()
    for prefix in ("df.", "events."):
        if text.startswith(prefix):
            text = text[len(prefix):]

    def DedupProcessor(ttl=None):
        return _Dedup(ttl_ms(spark, ttl) if ttl else 0)

    return eval("df." + text, {"DedupProcessor": DedupProcessor}, {"df": _Frame(df)})


def is_tws(query):
    """Whether a trace's query is a transformWithState dedup."""
    return isinstance(query, str) and "transformWithState" in query
