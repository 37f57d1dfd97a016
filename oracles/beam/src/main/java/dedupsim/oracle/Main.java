package dedupsim.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.beam.runners.direct.DirectOptions;
import org.apache.beam.runners.direct.DirectRunner;
import org.apache.beam.sdk.Pipeline;
import org.apache.beam.sdk.PipelineResult;
import org.apache.beam.sdk.metrics.MetricQueryResults;
import org.apache.beam.sdk.metrics.MetricResult;
import org.apache.beam.sdk.metrics.MetricsFilter;
import org.apache.beam.sdk.coders.KvCoder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.options.PipelineOptionsFactory;
import org.apache.beam.sdk.state.TimeDomain;
import org.apache.beam.sdk.testing.TestStream;
import org.apache.beam.sdk.transforms.Deduplicate;
import org.apache.beam.sdk.transforms.DoFn;
import org.apache.beam.sdk.transforms.ParDo;
import org.apache.beam.sdk.transforms.windowing.FixedWindows;
import org.apache.beam.sdk.transforms.windowing.Window;
import org.apache.beam.sdk.values.PCollection;
import org.apache.beam.sdk.values.KV;
import org.apache.beam.sdk.values.TimestampedValue;
import org.joda.time.Duration;
import org.joda.time.Instant;

/**
 * Runs dedupsim's Beam replay cases through Deduplicate.keyedValues() on the
 * Java DirectRunner, fed by a TestStream built from the case's steps
 * (elements, advanceWatermarkTo, advanceProcessingTime, then the watermark
 * to infinity), in the global window or fixed windows, and compares the
 * elements Deduplicate outputs (key, value, timestamp, as a multiset) and,
 * in fixed windows, the late-drop counter (DroppedDueToLateness of the
 * DirectRunner's GroupAlsoByWindow stage, or StatefulParDoDropped) with the case's
 * expected file.
 * Arguments: case files (NAME.json beside NAME.expected.jsonl). Exits 1 on
 * any difference or a case it cannot run.
 */
public final class Main {
  static final ObjectMapper JSON = new ObjectMapper();
  static final Map<String, Queue<String>> OUTPUT = new ConcurrentHashMap<>();

  /** Collects what Deduplicate outputs, per case. */
  static final class Collect extends DoFn<KV<String, String>, Void> {
    private final String id;

    Collect(String id) {
      this.id = id;
    }

    @ProcessElement
    public void process(@Element KV<String, String> e, @Timestamp Instant ts) {
      OUTPUT.computeIfAbsent(id, k -> new ConcurrentLinkedQueue<>()).add(render(e.getKey(), e.getValue(), ts.getMillis()));
    }
  }

  static String render(String key, String value, long ts) {
    return "{\"key\":" + quote(key) + ",\"value\":" + quote(value) + ",\"timestamp\":" + ts + "}";
  }

  static String quote(String s) {
    try {
      return JSON.writeValueAsString(s);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static long millis(JsonNode n, String what) {
    if (n.isNumber()) {
      return n.asLong();
    }
    String[] parts = n.asText().trim().split("\\s+");
    if (parts.length != 2) {
      throw new IllegalArgumentException(what + ": the oracle reads durations as \"N unit\" or a number of ms, not " + n);
    }
    long v = Long.parseLong(parts[0]);
    String u = parts[1].toLowerCase();
    if (u.endsWith("s") && !u.equals("ms")) {
      u = u.substring(0, u.length() - 1);
    }
    switch (u) {
      case "ms": case "millisecond": return v;
      case "second": return v * 1000;
      case "minute": return v * 60_000;
      case "hour": return v * 3_600_000;
      case "day": return v * 86_400_000;
      default: throw new IllegalArgumentException(what + ": unknown unit in " + n);
    }
  }

  public static void main(String[] args) throws Exception {
    long start = System.nanoTime();
    int failed = 0;
    for (String a : args) {
      try {
        List<String> diffs = runCase(Path.of(a));
        if (diffs.isEmpty()) {
          System.out.println("ok   " + a);
        } else {
          failed++;
          System.out.println("FAIL " + a);
          for (String d : diffs) {
            System.out.println("     " + d);
          }
        }
      } catch (Exception e) {
        failed++;
        System.out.println("FAIL " + a + ": cannot run: " + e);
      }
    }
    System.out.printf("beam oracle: %d cases, %d failed, %.1f s%n",
        args.length, failed, (System.nanoTime() - start) / 1e9);
    System.exit(failed == 0 ? 0 : 1);
  }

  static List<String> runCase(Path path) throws Exception {
    JsonNode trace = JSON.readTree(path.toFile());
    String base = path.toString().replaceAll("\\.json$", "");
    List<String> want = new ArrayList<>();
    JsonNode last = null;
    for (String line : Files.readAllLines(Path.of(base + ".expected.jsonl"))) {
      if (line.isBlank()) {
        continue;
      }
      last = JSON.readTree(line);
      for (JsonNode e : last.get("emitted")) {
        want.add(render(e.get("key").asText(), e.get("value").asText(), e.get("timestamp").asLong()));
      }
    }
    TimeDomain domain = trace.path("timeDomain").asText("processing").equals("event")
        ? TimeDomain.EVENT_TIME : TimeDomain.PROCESSING_TIME;
    Duration duration = trace.has("duration") ? Duration.millis(millis(trace.get("duration"), "duration")) : Duration.standardMinutes(10);

    TestStream.Builder<KV<String, String>> b = TestStream.create(KvCoder.of(StringUtf8Coder.of(), StringUtf8Coder.of()));
    for (JsonNode step : trace.get("steps")) {
      if (step.has("elements")) {
        List<TimestampedValue<KV<String, String>>> els = new ArrayList<>();
        for (JsonNode e : step.get("elements")) {
          String value = e.has("value") ? e.get("value").asText() : "";
          els.add(TimestampedValue.of(KV.of(e.get("key").asText(), value), new Instant(e.get("timestamp").asLong())));
        }
        if (!els.isEmpty()) {
          b = b.addElements(els.get(0), els.subList(1, els.size()).toArray(new TimestampedValue[0]));
        }
      } else if (step.has("advanceWatermark")) {
        b = b.advanceWatermarkTo(new Instant(step.get("advanceWatermark").asLong()));
      } else if (step.has("advanceProcessingTime")) {
        b = b.advanceProcessingTime(Duration.millis(millis(step.get("advanceProcessingTime"), "advanceProcessingTime")));
      } else {
        throw new IllegalArgumentException("unknown step " + step);
      }
    }
    TestStream<KV<String, String>> stream = b.advanceWatermarkToInfinity();

    DirectOptions options = PipelineOptionsFactory.create().as(DirectOptions.class);
    options.setRunner(DirectRunner.class);
    options.setBlockOnRun(true);
    options.setTargetParallelism(1);
    Pipeline p = Pipeline.create(options);
    String id = path.toString();
    OUTPUT.remove(id);
    PCollection<KV<String, String>> input = p.apply(stream);
    JsonNode window = trace.get("window");
    boolean fixed = window != null && window.isObject();
    if (fixed) {
      Window<KV<String, String>> w = Window.<KV<String, String>>into(
          FixedWindows.of(Duration.millis(millis(window.get("fixed"), "window.fixed"))));
      if (trace.has("allowedLateness")) {
        // Beam requires an accumulation mode with an allowed lateness;
        // Deduplicate is a stateful ParDo, which fires no panes of its own.
        w = w.withAllowedLateness(Duration.millis(millis(trace.get("allowedLateness"), "allowedLateness")))
            .discardingFiredPanes();
      }
      input = input.apply(w);
    } else if (window != null && !window.asText().equals("global")) {
      throw new IllegalArgumentException("window: " + window);
    } else if (trace.has("allowedLateness")) {
      throw new IllegalArgumentException("allowedLateness: only fixed windows take one");
    }
    input
        .apply(Deduplicate.<String, String>keyedValues().withTimeDomain(domain).withDuration(duration))
        .apply(ParDo.of(new Collect(id)));
    PipelineResult result = p.run();
    result.waitUntilFinish();

    List<String> got = new ArrayList<>(OUTPUT.getOrDefault(id, new ConcurrentLinkedQueue<>()));
    Collections.sort(got);
    Collections.sort(want);
    List<String> diffs = new ArrayList<>();
    if (!got.equals(want)) {
      diffs.add("emitted: expected " + want + ", Beam DirectRunner " + got);
    }
    if (fixed) {
      long dropped = 0;
      List<String> counters = new ArrayList<>();
      MetricQueryResults m = result.metrics().queryMetrics(MetricsFilter.builder().build());
      for (MetricResult<Long> c : m.getCounters()) {
        counters.add(c.getName() + "=" + c.getAttempted());
        String name = c.getName().getName();
        if (name.equals("StatefulParDoDropped") || name.equals("DroppedDueToLateness")) {
          dropped += c.getAttempted();
        }
      }
      long expected = last == null ? 0 : last.path("droppedLate").asLong();
      if (dropped != expected) {
        diffs.add("droppedLate: expected " + expected + ", Beam DirectRunner " + dropped + " (counters: " + counters + ")");
      }
    }
    return diffs;
  }
}
