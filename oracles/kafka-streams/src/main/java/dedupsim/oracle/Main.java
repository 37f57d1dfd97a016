package dedupsim.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.ValueAndTimestamp;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;
import org.apache.kafka.streams.test.TestRecord;

/**
 * Runs dedupsim's Kafka Streams replay cases through TopologyTestDriver and
 * compares, step by step, the records on the output topic, the state store's
 * contents, the live window-store segments and the task metrics with the
 * case's expected file. Arguments: case files (NAME.json, beside
 * NAME.expected.jsonl). Exits 1 on any difference or a case it cannot run.
 */
public final class Main {
  static final String IN = "input";
  static final String OUT = "output";
  static final String STORE = "eventId-store";
  static final String TABLE = "table-store";
  static final String KV_STORE = "eventId-seen-store";
  static final ObjectMapper JSON = new ObjectMapper();

  /** The tutorial's processor (FindDistinctEvents), the event id being the record key. */
  static final class DedupProcessor implements FixedKeyProcessor<String, String, String> {
    private final long left;
    private final long right;
    private final boolean streamTime;
    private FixedKeyProcessorContext<String, String> context;
    private WindowStore<String, Long> store;

    DedupProcessor(long window, boolean streamTime) {
      this.left = window / 2;
      this.right = window - left;
      this.streamTime = streamTime;
    }

    @Override
    public void init(FixedKeyProcessorContext<String, String> context) {
      this.context = context;
      this.store = context.getStateStore(STORE);
    }

    @Override
    public void process(FixedKeyRecord<String, String> record) {
      String id = record.key();
      long t = streamTime ? context.currentStreamTimeMs() : record.timestamp();
      boolean dup;
      try (WindowStoreIterator<Long> it = store.fetch(id, t - left, t + right)) {
        dup = it.hasNext();
      }
      store.put(id, t, t);
      context.forward(record.withValue(dup ? null : record.value()));
    }
  }

  /**
   * The wall-clock fix for the frozen stream time, as people write it: a key-value store of
   * first-seen wall-clock times, purged by a WALL_CLOCK_TIME punctuator of the entries maxAge old
   * or older; the lookup ignores age. It counts its punctuations for the comparison.
   */
  static final class WallClockDedupProcessor implements FixedKeyProcessor<String, String, String> {
    private final long maxAge;
    private final long interval;
    private final long[] punctuations;
    private FixedKeyProcessorContext<String, String> context;
    private KeyValueStore<String, Long> store;

    WallClockDedupProcessor(long maxAge, long interval, long[] punctuations) {
      this.maxAge = maxAge;
      this.interval = interval;
      this.punctuations = punctuations;
    }

    @Override
    public void init(FixedKeyProcessorContext<String, String> context) {
      this.context = context;
      this.store = context.getStateStore(KV_STORE);
      context.schedule(Duration.ofMillis(interval), PunctuationType.WALL_CLOCK_TIME, now -> {
        punctuations[0]++;
        List<String> expired = new ArrayList<>();
        try (KeyValueIterator<String, Long> it = store.all()) {
          while (it.hasNext()) {
            KeyValue<String, Long> kv = it.next();
            if (now - kv.value >= maxAge) {
              expired.add(kv.key);
            }
          }
        }
        expired.forEach(store::delete);
      });
    }

    @Override
    public void process(FixedKeyRecord<String, String> record) {
      String id = record.key();
      if (store.get(id) != null) {
        context.forward(record.withValue(null));
        return;
      }
      store.put(id, context.currentSystemTimeMs());
      context.forward(record);
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
    System.out.printf("kafka-streams oracle: %d cases, %d failed, %.1f s%n",
        args.length, failed, (System.nanoTime() - start) / 1e9);
    System.exit(failed == 0 ? 0 : 1);
  }

  static List<String> runCase(Path path) throws IOException {
    JsonNode trace = JSON.readTree(path.toFile());
    String base = path.toString().replaceAll("\\.json$", "");
    List<JsonNode> expected = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of(base + ".expected.jsonl"))) {
      if (!line.isBlank()) {
        expected.add(JSON.readTree(line));
      }
    }
    boolean keepLast = trace.path("mode").asText("keep-first").equals("keep-last");
    boolean wallClock = !keepLast && trace.path("time").asText("stream").equals("wall-clock");
    long[] punctuations = new long[1];
    StreamsBuilder builder = new StreamsBuilder();
    if (wallClock) {
      long maxAge = millis(trace.get("window"), "window");
      long interval = millis(trace.get("punctuate"), "punctuate");
      builder.addStateStore(Stores.keyValueStoreBuilder(
          Stores.persistentKeyValueStore(KV_STORE), Serdes.String(), Serdes.Long()));
      builder.stream(IN, Consumed.with(Serdes.String(), Serdes.String()))
          .processValues(() -> new WallClockDedupProcessor(maxAge, interval, punctuations), KV_STORE)
          .filter((k, v) -> v != null)
          .to(OUT, Produced.with(Serdes.String(), Serdes.String()));
    } else if (keepLast && trace.path("form").asText("toTable").equals("reduce")) {
      builder.stream(IN, Consumed.with(Serdes.String(), Serdes.String()))
          .groupByKey()
          .reduce((older, newer) -> newer, Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as(TABLE)
              .withKeySerde(Serdes.String()).withValueSerde(Serdes.String()))
          .toStream()
          .to(OUT, Produced.with(Serdes.String(), Serdes.String()));
    } else if (keepLast) {
      builder.stream(IN, Consumed.with(Serdes.String(), Serdes.String()))
          .toTable(Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as(TABLE)
              .withKeySerde(Serdes.String()).withValueSerde(Serdes.String()))
          .toStream()
          .to(OUT, Produced.with(Serdes.String(), Serdes.String()));
    } else {
      long window = millis(trace.get("window"), "window");
      boolean streamTime = trace.path("time").asText("stream").equals("stream");
      builder.addStateStore(Stores.windowStoreBuilder(
          Stores.persistentWindowStore(STORE, Duration.ofMillis(window), Duration.ofMillis(window), false),
          Serdes.String(), Serdes.Long()));
      builder.stream(IN, Consumed.with(Serdes.String(), Serdes.String()))
          .processValues(() -> new DedupProcessor(window, streamTime), STORE)
          .filter((k, v) -> v != null)
          .to(OUT, Produced.with(Serdes.String(), Serdes.String()));
    }
    Topology topology = builder.build();
    Path stateDir = Files.createTempDirectory("dedupsim-kstreams-oracle");
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, "dedupsim-oracle");
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "dummy:1234");
    props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
    props.put(StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG, "DEBUG");
    List<String> diffs = new ArrayList<>();
    try (TopologyTestDriver driver = new TopologyTestDriver(topology, props, Instant.ofEpochMilli(0))) {
      TestInputTopic<String, String> in = driver.createInputTopic(IN, Serdes.String().serializer(), Serdes.String().serializer());
      TestOutputTopic<String, String> out = driver.createOutputTopic(OUT, Serdes.String().deserializer(), Serdes.String().deserializer());
      JsonNode steps = trace.get("steps");
      if (steps.size() != expected.size()) {
        diffs.add("the case has " + steps.size() + " steps, its expected file " + expected.size() + " lines");
        return diffs;
      }
      for (int i = 0; i < steps.size(); i++) {
        JsonNode step = steps.get(i);
        if (step.has("advanceWallClock")) {
          driver.advanceWallClockTime(Duration.ofMillis(millis(step.get("advanceWallClock"), "advanceWallClock")));
        } else {
          for (JsonNode r : step.get("records")) {
            String value = r.has("value") ? r.get("value").asText() : "";
            in.pipeInput(r.get("key").asText(), value, Instant.ofEpochMilli(r.get("timestamp").asLong()));
          }
        }
        ObjectNode got = JsonNodeFactory.instance.objectNode();
        ArrayNode output = got.putArray("output");
        for (TestRecord<String, String> rec : out.readRecordsToList()) {
          ObjectNode o = output.addObject();
          o.put("key", rec.key());
          o.put("value", rec.value());
          o.put("timestamp", rec.getRecordTime().toEpochMilli());
        }
        List<String> fields;
        if (wallClock) {
          ArrayNode store = got.putArray("store");
          try (KeyValueIterator<String, Long> it = driver.<String, Long>getKeyValueStore(KV_STORE).all()) {
            List<KeyValue<String, Long>> rows = new ArrayList<>();
            it.forEachRemaining(rows::add);
            rows.sort(Comparator.comparing(kv -> kv.key));
            for (KeyValue<String, Long> kv : rows) {
              ObjectNode o = store.addObject();
              o.put("key", kv.key);
              o.put("timestamp", kv.value);
            }
          }
          got.put("punctuations", punctuations[0]);
          fields = List.of("output", "store", "punctuations");
        } else if (keepLast) {
          ArrayNode table = got.putArray("table");
          try (KeyValueIterator<String, ValueAndTimestamp<String>> it = driver.<String, String>getTimestampedKeyValueStore(TABLE).all()) {
            List<KeyValue<String, ValueAndTimestamp<String>>> rows = new ArrayList<>();
            it.forEachRemaining(rows::add);
            rows.sort(Comparator.comparing(kv -> kv.key));
            for (KeyValue<String, ValueAndTimestamp<String>> kv : rows) {
              ObjectNode o = table.addObject();
              o.put("key", kv.key);
              o.put("value", kv.value.value());
              o.put("timestamp", kv.value.timestamp());
            }
          }
          fields = List.of("output", "table");
        } else {
          ArrayNode store = got.putArray("store");
          try (KeyValueIterator<Windowed<String>, Long> it = driver.<String, Long>getWindowStore(STORE).all()) {
            List<KeyValue<Windowed<String>, Long>> rows = new ArrayList<>();
            it.forEachRemaining(rows::add);
            rows.sort(Comparator.<KeyValue<Windowed<String>, Long>, String>comparing(kv -> kv.key.key())
                .thenComparingLong(kv -> kv.key.window().start()));
            for (KeyValue<Windowed<String>, Long> kv : rows) {
              ObjectNode o = store.addObject();
              o.put("key", kv.key.key());
              o.put("timestamp", kv.key.window().start());
            }
          }
          ArrayNode segs = got.putArray("segments");
          for (long s : segments(stateDir)) {
            segs.add(s);
          }
          got.put("droppedRecordsTotal", (long) metric(driver, "dropped-records-total"));
          fields = List.of("output", "store", "segments", "droppedRecordsTotal");
        }
        // Reparsed so that numbers compare as the expected file's do.
        JsonNode have = JSON.readTree(got.toString());
        for (String f : fields) {
          JsonNode want = expected.get(i).get(f);
          if (want == null || !want.equals(have.get(f))) {
            diffs.add("step " + i + " " + f + ": expected " + want + ", Kafka Streams " + have.get(f));
          }
        }
      }
    } finally {
      deleteTree(stateDir);
    }
    return diffs;
  }

  /** The start times of the window store's segment directories (STORE.&lt;start&gt;). */
  static TreeSet<Long> segments(Path stateDir) throws IOException {
    TreeSet<Long> out = new TreeSet<>();
    try (Stream<Path> s = Files.walk(stateDir)) {
      s.filter(Files::isDirectory).forEach(p -> {
        String n = p.getFileName().toString();
        if (n.startsWith(STORE + ".")) {
          out.add(Long.parseLong(n.substring(STORE.length() + 1)));
        }
      });
    }
    return out;
  }

  static double metric(TopologyTestDriver driver, String name) {
    double sum = 0;
    boolean found = false;
    for (Map.Entry<MetricName, ? extends Metric> e : driver.metrics().entrySet()) {
      if (e.getKey().name().equals(name)) {
        Object v = e.getValue().metricValue();
        if (v instanceof Number) {
          sum += ((Number) v).doubleValue();
          found = true;
        }
      }
    }
    if (!found) {
      TreeSet<String> names = new TreeSet<>();
      driver.metrics().keySet().forEach(m -> names.add(m.group() + "/" + m.name()));
      throw new IllegalStateException("no metric " + name + " among " + names);
    }
    return sum;
  }

  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> s = Files.walk(root)) {
      s.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
    }
  }
}
