"""The dedup processor people write with Spark 4's transformWithState
(pyspark 4.1+, the Row API), as dedupsim models it: one ValueState per
grouping key, with a TTL in processing time or none; the first row of a
key whose state does not exist is emitted and sets the state, every other
row is dropped while the state exists. In event time (timer=), the state
is set with a timer at the first row's event time + the horizon, and the
timer clears it.

    df.groupBy("id").transformWithState(DedupProcessor(ttl="10 minutes"))
    df.withWatermark("t", "10 seconds").groupBy("id").transformWithState(
        DedupProcessor(timer="1 minute"), timeMode="EventTime")

are dedupsim's query texts; apply() turns them into the PySpark call
(outputStructType = the input's schema, outputMode "Append", timeMode
"ProcessingTime" unless given). pyspark 3.5 has no transformWithState: importing this
module there fails, and the suite says so instead of running the case.
"""

import calendar
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


class _DedupTimer(StatefulProcessor):
    """The event-time processor: a timer per key at its first row's event
    time (ms) + timer_ms, which clears the key's state."""

    def __init__(self, timer_ms):
        self.timer_ms = timer_ms
        self.column = None  # the watermarked event-time column, set by _Grouped

    def init(self, handle):
        self.handle = handle
        self.seen = handle.getValueState("seen", StructType([StructField("seen", LongType())]))

    def handleInputRows(self, key, rows, timerValues):
        if self.seen.exists():
            return
        first = next(rows, None)
        if first is not None:
            self.seen.update((1,))
            t = first[self.column]  # a naive datetime in UTC (the session's time zone)
            self.handle.registerTimer(calendar.timegm(t.timetuple()) * 1000 + t.microsecond // 1000 + self.timer_ms)
            yield first

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        self.seen.clear()
        return iter([])

    def close(self):
        pass


class _Grouped:
    def __init__(self, df, keys, column):
        self.df, self.keys, self.column = df, keys, column

    def transformWithState(self, processor, outputStructType=None, outputMode="Append", timeMode="ProcessingTime"):
        if isinstance(processor, _DedupTimer):
            processor.column = self.column
        return self.df.groupBy(*self.keys).transformWithState(
            processor, outputStructType or self.df.schema, outputMode, timeMode)

    transformWithStateInPandas = transformWithState


class _Frame:
    def __init__(self, df, column=None):
        self.df, self.column = df, column

    def withWatermark(self, column, delay):
        return _Frame(self.df.withWatermark(column, delay), column)

    def groupBy(self, *keys):
        flat = []
        for k in keys:
            flat.extend(k if isinstance(k, (list, tuple)) else [k])
        return _Grouped(self.df, flat, self.column)


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

    def DedupProcessor(ttl=None, timer=None):
        if timer:
            return _DedupTimer(ttl_ms(spark, timer))
        return _Dedup(ttl_ms(spark, ttl) if ttl else 0)

    return eval("df." + text, {"DedupProcessor": DedupProcessor}, {"df": _Frame(df)})


def is_tws(query):
    """Whether a trace's query is a transformWithState dedup."""
    return isinstance(query, str) and "transformWithState" in query


def is_event_time(query):
    """Whether a transformWithState dedup runs in event time (a timer)."""
    return is_tws(query) and "EventTime" in query
