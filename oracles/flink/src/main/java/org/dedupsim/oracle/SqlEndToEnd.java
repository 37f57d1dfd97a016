package org.dedupsim.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

import java.io.File;
import java.nio.file.Files;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Flink SQL end to end: every case whose outcome does not hang on the clocks runs as a Flink SQL
 * job on a local MiniCluster (parallelism 1). The trace's rows are a bounded DataStream whose
 * watermarks are the trace's own (a generator that emits a marker row's watermark, the markers then
 * filtered out), turned into a table with {@code fromDataStream} (the rowtime attribute the
 * record's timestamp, {@code SOURCE_WATERMARK()}; {@code PROCTIME()}), the case's query planned and
 * run by Flink's planner with the case's options, and its changelog collected
 * ({@code toChangelogStream}: all kinds when the case wants -U rows, else upsert on the PARTITION BY
 * columns). All cases run as one job. Each key's changelog, in order, must equal the concatenation
 * of the case's expected rows for that key.
 *
 * <p>A state TTL the trace's TTL clock never reaches runs as 1 h (on, never reached). Left to the
 * harness (FlinkOracle): a TTL that expires entries (the TTL clock is the wall clock here), a
 * mini-batch whose bundles hold more than one row (flushed on the processing-time timer), and the
 * rowtime mini-batch (its assigner holds the watermarks back to mini-batch ends).
 */
public final class SqlEndToEnd {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern OVER =
            Pattern.compile(
                    "(?is)ROW_NUMBER\\s*\\(\\s*\\)\\s*OVER\\s*\\(\\s*(?:PARTITION\\s+BY\\s+([^)]*?)\\s+)?ORDER\\s+BY\\s+`?(\\w+)`?\\s*(ASC|DESC)?\\s*\\)");
    private static final String[] RESET = PlannedOperator.RESET;

    /** One case planned into the job: its name, columns, keys and collected changelog. */
    private static final class Planned {
        String name;
        List<String> cols, keys;
        String rowTimeCol;
        boolean rowtime;
        CloseableIterator<Row> out;
        Map<String, List<String>> want;
    }

    /** Runs the check; returns the exit status. */
    static int run(String[] args) throws Exception {
        String version = System.getProperty("flink.version", "2.3.0");
        boolean classpath21 = !version.startsWith("2.0");
        File[] fs = new File(args[0]).listFiles((d, n) -> n.endsWith(".json"));
        if (fs == null || fs.length == 0) {
            System.out.println("oracle: no case files in " + args[0]);
            return 1;
        }
        Arrays.sort(fs);
        long t0 = System.nanoTime();
        // One job on the default heap backend, one on RocksDB (state.backend.type is the job's).
        Jobs jobs = new Jobs();
        List<Planned> planned = new ArrayList<>();
        int skipped = 0, failed = 0;
        for (File f : fs) {
            String name = f.getName().replaceAll("\\.json$", "");
            try {
                String why = plan(f, name, jobs, classpath21, planned);
                if (why != null) {
                    skipped++;
                    System.out.println("skip sql: " + name + ": " + why);
                }
            } catch (Throwable t) {
                failed++;
                System.out.println("FAIL sql: " + name + ": cannot plan: " + t);
            }
        }
        for (int b = 0; b < 2; b++) {
            if (jobs.used[b]) {
                jobs.env[b].execute("dedupsim Flink SQL end to end (" + (b == 0 ? "hashmap" : "rocksdb") + ")");
            }
        }
        int passed = 0;
        for (Planned p : planned) {
            Map<String, List<String>> got = new TreeMap<>();
            try (CloseableIterator<Row> it = p.out) {
                while (it.hasNext()) {
                    Row r = it.next();
                    ObjectNode o = JsonNodeFactory.instance.objectNode();
                    for (String c : p.cols) {
                        Object v = r.getField(c);
                        if (v instanceof Instant) {
                            o.put(c, ((Instant) v).toEpochMilli());
                        } else if (v instanceof Long) {
                            o.put(c, (Long) v);
                        } else {
                            o.put(c, String.valueOf(v));
                        }
                    }
                    got.computeIfAbsent(keyOf(o, p.keys), k -> new ArrayList<>()).add(r.getKind().shortString() + " " + canon(o));
                }
            }
            if (got.equals(p.want)) {
                passed++;
                System.out.println("ok   sql: " + p.name);
            } else {
                failed++;
                System.out.println("FAIL sql: " + p.name + ": Flink SQL's changelog per key " + got + ", expected " + p.want);
            }
        }
        System.out.printf(
                "Flink %s SQL end to end: %d case files, ran %d (%d passed, %d failed), %d skipped, one job per state backend, %.1f s%n",
                version, fs.length, passed + failed, passed, failed, skipped, (System.nanoTime() - t0) / 1e9);
        return failed == 0 && passed > 0 ? 0 : 1;
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args));
    }

    /** The two jobs: [0] on the heap backend, [1] on RocksDB; created when a case needs one. */
    private static final class Jobs {
        final StreamExecutionEnvironment[] env = new StreamExecutionEnvironment[2];
        final StreamTableEnvironment[] tEnv = new StreamTableEnvironment[2];
        final boolean[] used = new boolean[2];

        int get(boolean rocksdb) {
            int b = rocksdb ? 1 : 0;
            if (env[b] == null) {
                org.apache.flink.configuration.Configuration conf = new org.apache.flink.configuration.Configuration();
                conf.setString("state.backend.type", rocksdb ? "rocksdb" : "hashmap");
                env[b] = StreamExecutionEnvironment.getExecutionEnvironment(conf);
                env[b].setParallelism(1);
                tEnv[b] = StreamTableEnvironment.create(env[b], EnvironmentSettings.inStreamingMode());
            }
            used[b] = true;
            return b;
        }
    }

    /** Adds the case's pipeline to its job, or returns why it is left to the harness. */
    private static String plan(File f, String name, Jobs jobs, boolean classpath21, List<Planned> planned) throws Exception {
        JsonNode trace = JSON.readTree(f);
        String caseVersion = trace.path("version").asText("2.3");
        boolean case21 = !caseVersion.startsWith("2.0");
        String procTime = trace.path("procTime").asText("proc_time");
        String rowTimeCol = trace.path("rowTime").asText("event_time");
        List<String> keys = new ArrayList<>();
        boolean rowtime, keepLast;
        JsonNode q = trace.path("query");
        String sql;
        if (q.isTextual()) {
            sql = q.asText();
            Matcher m = OVER.matcher(sql);
            if (!m.find()) {
                throw new IllegalArgumentException("query is not the ROW_NUMBER pattern");
            }
            if (m.group(1) != null) {
                for (String k : m.group(1).split(",")) {
                    keys.add(k.trim().replace("`", ""));
                }
            }
            rowtime = m.group(2).equalsIgnoreCase(rowTimeCol);
            keepLast = "DESC".equalsIgnoreCase(m.group(3));
        } else {
            q.path("keys").forEach(k -> keys.add(k.asText()));
            rowtime = "rowtime".equals(q.path("order").asText());
            keepLast = "last".equals(q.path("keep").asText());
            StringBuilder b = new StringBuilder("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (");
            if (!keys.isEmpty()) {
                b.append("PARTITION BY ").append(String.join(", ", keys)).append(' ');
            }
            b.append("ORDER BY ").append(rowtime ? rowTimeCol : procTime).append(keepLast ? " DESC" : " ASC");
            sql = b.append(") AS rn FROM events) WHERE rn = 1").toString();
        }
        Map<String, String> options = new LinkedHashMap<>();
        trace.path("options").fields().forEachRemaining(e -> options.put(e.getKey(), e.getValue().asText()));
        boolean miniBatch = options.getOrDefault("table.exec.mini-batch.enabled", "false").equals("true");
        String ttlText = options.getOrDefault("table.exec.state.ttl", "0").trim();
        boolean isoTTL = !ttlText.isEmpty() && !Character.isDigit(ttlText.charAt(0));
        if (isoTTL && case21 != classpath21) {
            return "the case is for Flink " + caseVersion + ", whose line reads durations otherwise";
        }
        if (!ttlText.matches("0+( *ms)?")) {
            // The TTL clock is the wall clock in a job. A TTL the trace's TTL clock never reaches
            // (every ttlTime below it: nothing expires in the harness either) behaves as any TTL
            // that is on and never reached: it runs as 1 h. Otherwise the harness judges it.
            long ttl = org.apache.flink.util.TimeUtils.parseDuration(ttlText).toMillis();
            long maxClock = 0;
            for (JsonNode st : trace.path("steps")) {
                maxClock = Math.max(maxClock, st.path("ttlTime").asLong(0));
            }
            if (maxClock >= ttl) {
                return "the state TTL expires entries on the trace's TTL clock, which is the wall clock in a job (the harness sets it)";
            }
            options.put("table.exec.state.ttl", "1 h");
        }
        if (miniBatch && (rowtime || !options.getOrDefault("table.exec.mini-batch.size", "-1").trim().equals("1"))) {
            return "a mini-batch bundle of more than one row, or by event time: its flushes follow the processing-time timer in a job (the harness flushes on the trace's steps)";
        }
        if (rowtime && !keepLast && !miniBatch && case21 != classpath21) {
            return "the case is for Flink " + caseVersion + ", whose line differs here";
        }
        boolean updateBefore = trace.path("generateUpdateBefore").asBoolean(false);
        boolean rocksdb = "rocksdb".equalsIgnoreCase(options.getOrDefault("state.backend.type", "hashmap").trim());
        options.remove("state.backend.type");
        // The compaction filter's setting is the backend's; a job here compacts on RocksDB's own
        // schedule (compact steps are the harness's), so the setting changes nothing it shows.
        options.remove(FlinkOracle.QUERY_TIME_AFTER);
        int job = jobs.get(rocksdb);
        StreamExecutionEnvironment env = jobs.env[job];
        StreamTableEnvironment tEnv = jobs.tEnv[job];

        // The columns (the first element's) and the stream: rows and watermark markers in order.
        List<String> cols = new ArrayList<>();
        List<TypeInformation<?>> types = new ArrayList<>();
        for (JsonNode st : trace.path("steps")) {
            if (st.has("element")) {
                Iterator<Map.Entry<String, JsonNode>> it = st.get("element").fields();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> e = it.next();
                    cols.add(e.getKey());
                    types.add(e.getValue().isTextual() ? Types.STRING : Types.LONG);
                }
                break;
            }
        }
        List<String> physical = new ArrayList<>();
        List<TypeInformation<?>> physicalTypes = new ArrayList<>();
        for (int i = 0; i < cols.size(); i++) {
            if (!(rowtime && cols.get(i).equals(rowTimeCol))) {
                physical.add(cols.get(i));
                physicalTypes.add(types.get(i));
            }
        }
        // Each stream element: [marker watermark or null, timestamp, physical columns...].
        List<Row> elements = new ArrayList<>();
        for (JsonNode st : trace.path("steps")) {
            if (st.has("element")) {
                Row r = new Row(physical.size() + 2);
                r.setField(1, rowtime ? st.get("element").get(rowTimeCol).asLong() : 0L);
                for (int i = 0; i < physical.size(); i++) {
                    JsonNode v = st.get("element").get(physical.get(i));
                    r.setField(i + 2, v.isTextual() ? (Object) v.asText() : (Object) v.asLong());
                }
                elements.add(r);
            } else if (st.has("watermark")) {
                Row r = new Row(physical.size() + 2);
                r.setField(0, st.get("watermark").asLong());
                r.setField(1, 0L);
                elements.add(r);
            }
            // ttlTime and processingTime: no TTL here, and the dedup registers no
            // processing-time timers; endOfInput: the bounded source's end (the maximum watermark);
            // compact: nothing expires here, so a compaction drops nothing a job could show.
        }
        List<TypeInformation<?>> all = new ArrayList<>();
        all.add(Types.LONG);
        all.add(Types.LONG);
        all.addAll(physicalTypes);
        RowTypeInfo withMarkers = new RowTypeInfo(all.toArray(new TypeInformation<?>[0]));
        RowTypeInfo rowsOnly = new RowTypeInfo(physicalTypes.toArray(new TypeInformation<?>[0]), physical.toArray(new String[0]));
        int n = physical.size();
        DataStream<Row> source = env.fromData(withMarkers, elements.toArray(new Row[0]))
                .assignTimestampsAndWatermarks(
                        WatermarkStrategy.<Row>forGenerator(ctx -> new MarkerWatermarks())
                                .withTimestampAssigner((r, ts) -> (Long) r.getField(1)))
                .filter(r -> r.getField(0) == null)
                .map(r -> {
                    Row o = new Row(n);
                    for (int i = 0; i < n; i++) {
                        o.setField(i, r.getField(i + 2));
                    }
                    return o;
                })
                .returns(rowsOnly);
        Schema.Builder schema = Schema.newBuilder();
        for (int i = 0; i < physical.size(); i++) {
            schema.column(physical.get(i), physicalTypes.get(i) == Types.STRING ? "STRING" : "BIGINT");
        }
        if (rowtime) {
            schema.columnByMetadata(rowTimeCol, org.apache.flink.table.api.DataTypes.TIMESTAMP_LTZ(3), "rowtime").watermark(rowTimeCol, "SOURCE_WATERMARK()");
        }
        schema.columnByExpression(procTime, "PROCTIME()");
        Table events = tEnv.fromDataStream(source, schema.build());
        tEnv.createTemporaryView("events", events);
        for (int i = 0; i < RESET.length; i += 2) {
            tEnv.getConfig().set(RESET[i], RESET[i + 1]);
        }
        for (Map.Entry<String, String> e : options.entrySet()) {
            tEnv.getConfig().set(e.getKey(), e.getValue());
        }
        Table result = tEnv.sqlQuery(sql);
        DataStream<Row> changelog;
        if (updateBefore || keys.isEmpty()) {
            changelog = tEnv.toChangelogStream(result);
        } else {
            Schema.Builder out = Schema.newBuilder();
            // Every column as the planner resolves it, the keys NOT NULL for the primary key.
            for (org.apache.flink.table.catalog.Column c : result.getResolvedSchema().getColumns()) {
                out.column(c.getName(), keys.contains(c.getName()) ? c.getDataType().notNull() : c.getDataType());
            }
            out.primaryKey(keys);
            changelog = tEnv.toChangelogStream(result, out.build(), ChangelogMode.upsert());
        }
        tEnv.dropTemporaryView("events");
        Planned p = new Planned();
        p.name = name;
        p.cols = cols;
        p.keys = keys;
        p.rowtime = rowtime;
        p.rowTimeCol = rowTimeCol;
        p.out = changelog.collectAsync();
        p.want = new TreeMap<>();
        List<String> expected = Files.readAllLines(new File(f.getPath().replaceAll("\\.json$", ".expected.jsonl")).toPath());
        for (String line : expected) {
            if (line.isBlank()) {
                continue;
            }
            for (JsonNode e : JSON.readTree(line).path("emitted")) {
                p.want.computeIfAbsent(keyOf(e.get("row"), keys), k -> new ArrayList<>()).add(e.get("kind").asText() + " " + canon(e.get("row")));
            }
        }
        planned.add(p);
        return null;
    }

    /** Emits a marker row's watermark (field 0) at its place in the stream; nothing periodic. */
    private static final class MarkerWatermarks implements WatermarkGenerator<Row> {
        @Override
        public void onEvent(Row r, long ts, WatermarkOutput out) {
            if (r.getField(0) != null) {
                out.emitWatermark(new Watermark((Long) r.getField(0)));
            }
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput out) {}
    }

    private static String keyOf(JsonNode row, List<String> keys) {
        StringBuilder b = new StringBuilder();
        for (String k : keys) {
            b.append(row.get(k)).append('|');
        }
        return b.toString();
    }

    private static String canon(JsonNode row) throws Exception {
        return JSON.writeValueAsString(new TreeMap<>(JSON.convertValue(row, Map.class)));
    }
}
