package org.dedupsim.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.flink.runtime.state.StateEntry;
import org.apache.flink.runtime.state.heap.HeapKeyedStateBackend;
import org.apache.flink.runtime.state.ttl.TtlUtils;
import org.apache.flink.runtime.state.ttl.TtlValue;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.TimeUtils;

import java.io.File;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.file.Files;
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
 * Runs every Flink trace of dedupsim (sim/flink/testdata/*.json) through Flink's own deduplicate
 * functions in KeyedOneInputStreamOperatorTestHarness and compares each step with the case's
 * NAME.expected.jsonl: the emitted rows per key in order (across keys Flink's order is its hash
 * map's or timer heap's), the logical state (entries not expired at the TTL clock, read from the
 * heap backend's tables without touching them), Flink's physical count (numKeyedStateEntries)
 * against the expected logical..physical range, and numLateRecordsDropped. Exits 1 on any
 * difference or any case it cannot run.
 */
public final class FlinkOracle {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern OVER =
            Pattern.compile(
                    "(?is)ROW_NUMBER\\s*\\(\\s*\\)\\s*OVER\\s*\\(\\s*(?:PARTITION\\s+BY\\s+([^)]*?)\\s+)?ORDER\\s+BY\\s+`?(\\w+)`?\\s*(ASC|DESC)?\\s*\\)");

    /** The Flink version of the classpath, from flink-core's manifest or the property. */
    private final String flinkVersion;

    private FlinkOracle(String flinkVersion) {
        this.flinkVersion = flinkVersion;
    }

    /** Runs the check; returns the exit status. */
    static int run(String[] args) throws Exception {
        String version = System.getProperty("flink.version", "2.3.0");
        FlinkOracle oracle = new FlinkOracle(version);
        int failed = 0, passed = 0, skipped = 0;
        List<File> files = new ArrayList<>();
        for (String dir : args) {
            File[] fs = new File(dir).listFiles((d, n) -> n.endsWith(".json"));
            if (fs == null) {
                System.out.println("FAIL " + dir + ": not a directory");
                failed++;
                continue;
            }
            Arrays.sort(fs);
            files.addAll(Arrays.asList(fs));
        }
        if (files.isEmpty()) {
            System.out.println("FAIL no cases");
            return 1;
        }
        for (File f : files) {
            String name = f.getName().replaceAll("\\.json$", "");
            try {
                String result = oracle.runCase(f);
                if (result == null) {
                    passed++;
                    System.out.println("ok   " + name);
                } else if (result.startsWith("SKIP")) {
                    skipped++;
                    System.out.println("skip " + name + ": " + result.substring(5));
                } else {
                    failed++;
                    System.out.println("FAIL " + name + ": " + result);
                }
            } catch (Throwable t) {
                failed++;
                System.out.println("FAIL " + name + ": cannot run: " + t);
            }
        }
        // The error cases Flink itself refuses (errors/flink-refuses.tsv: the case and the text of
        // Flink's error): planned on their own 2.0/2.1+ line, Flink must fail with that text.
        File refuses = new File(args[0], "errors/flink-refuses.tsv");
        if (refuses.exists()) {
            for (String line : Files.readAllLines(refuses.toPath())) {
                if (line.isBlank()) {
                    continue;
                }
                String[] parts = line.split("\t", 2);
                File ef = new File(args[0], "errors/" + parts[0] + ".json");
                files.add(ef);
                String r;
                try {
                    r = oracle.refuses(ef, parts[1]);
                } catch (Throwable t) {
                    r = "cannot run: " + t;
                }
                if (r == null) {
                    passed++;
                    System.out.println("ok   errors/" + parts[0] + ": Flink refuses it: " + parts[1]);
                } else if (r.startsWith("SKIP")) {
                    skipped++;
                    System.out.println("skip errors/" + parts[0] + ": " + r.substring(5));
                } else {
                    failed++;
                    System.out.println("FAIL errors/" + parts[0] + ": " + r);
                }
            }
        }
        int ran = passed + failed;
        System.out.printf(
                "Flink %s: %d case files, ran %d (%d passed, %d failed), %d skipped (pinned to the other"
                        + " 2.0/2.1+ line); physical state below dedupsim's physicalState (incremental cleanup)"
                        + " at %d of %d steps; functions the planner picked: %s%n",
                version, files.size(), ran, passed, failed, skipped, oracle.cleanedEarlier, oracle.totalSteps, oracle.usedFunctions);
        // Every case file must be accounted for: run, or skipped for the other line; none run is a failure.
        if (ran == 0 || ran + skipped < files.size()) {
            System.out.println("oracle: ran " + ran + " and skipped " + skipped + " of " + files.size() + " case files");
            return 1;
        }
        return failed == 0 ? 0 : 1;
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args));
    }

    /** Plans an error case; returns null when Flink fails with want in its messages, "SKIP why", or what happened. */
    private String refuses(File f, String want) throws Exception {
        JsonNode trace = JSON.readTree(f);
        String caseVersion = trace.path("version").asText("2.3");
        if (caseVersion.startsWith("2.0") != flinkVersion.startsWith("2.0")) {
            return "SKIP the case is for Flink " + caseVersion + ", whose line differs from " + flinkVersion + " here";
        }
        Map<String, String> options = new LinkedHashMap<>();
        trace.path("options").fields().forEachRemaining(e -> options.put(e.getKey(), e.getValue().asText()));
        JsonNode q = trace.path("query");
        List<String> keys = new ArrayList<>();
        q.path("keys").forEach(k -> keys.add(k.asText()));
        boolean rowtime = "rowtime".equals(q.path("order").asText());
        String sql = q.isTextual() ? q.asText() : structuredSQL(keys, rowtime ? "event_time" : "proc_time", "last".equals(q.path("keep").asText()));
        List<String> cols = new ArrayList<>(), types = new ArrayList<>();
        trace.path("steps").get(0).path("element").fields().forEachRemaining(e -> {
            cols.add(e.getKey());
            types.add(e.getValue().isTextual() ? "STRING" : "BIGINT");
        });
        try {
            new PlannedOperator(sql, cols, types, "proc_time", "event_time", rowtime, options, false, keys);
        } catch (Exception e) {
            StringBuilder msgs = new StringBuilder();
            for (Throwable c = e; c != null; c = c.getCause()) {
                msgs.append(c.getMessage()).append(" / ");
            }
            return msgs.toString().contains(want) ? null : "Flink fails otherwise: " + msgs;
        }
        return "Flink " + flinkVersion + " plans it; dedupsim refuses it";
    }

    /** Runs one case; returns null when it matches, "SKIP reason", or the first difference. */
    private String runCase(File f) throws Exception {
        JsonNode trace = JSON.readTree(f);
        if (!"flink".equals(trace.path("engine").asText())) {
            return "engine is not flink";
        }
        String caseVersion = trace.path("version").asText("2.3");
        boolean insertOnlyPlanner = !caseVersion.startsWith("2.0");
        String procTime = trace.path("procTime").asText("proc_time");
        String rowTimeCol = trace.path("rowTime").asText("event_time");

        // The query: SQL (read with a regex: PARTITION BY, ORDER BY, direction) or structured.
        List<String> keys = new ArrayList<>();
        boolean rowtime, keepLast;
        JsonNode q = trace.path("query");
        if (q.isTextual()) {
            Matcher m = OVER.matcher(q.asText());
            if (!m.find()) {
                return "query is not the ROW_NUMBER pattern";
            }
            if (m.group(1) != null) {
                for (String k : m.group(1).split(",")) {
                    keys.add(k.trim().replace("`", ""));
                }
            }
            String order = m.group(2);
            if (order.equalsIgnoreCase(rowTimeCol)) {
                rowtime = true;
            } else if (order.equalsIgnoreCase(procTime)) {
                rowtime = false;
            } else {
                return "ORDER BY " + order + " is not a time attribute";
            }
            keepLast = "DESC".equalsIgnoreCase(m.group(3));
        } else {
            q.path("keys").forEach(k -> keys.add(k.asText()));
            rowtime = "rowtime".equals(q.path("order").asText());
            keepLast = "last".equals(q.path("keep").asText());
        }

        // Options, verbatim: Flink's planner reads them (TimeUtils.parseDuration of this version).
        JsonNode opts = trace.path("options");
        Map<String, String> options = new LinkedHashMap<>();
        opts.fields().forEachRemaining(e -> options.put(e.getKey(), e.getValue().asText()));
        boolean miniBatch = options.getOrDefault("table.exec.mini-batch.enabled", "false").equals("true");
        String ttlText = options.getOrDefault("table.exec.state.ttl", "0").trim();
        boolean isoTTL = !ttlText.isEmpty() && !Character.isDigit(ttlText.charAt(0));
        boolean generateUpdateBefore = trace.path("generateUpdateBefore").asBoolean(false);

        // A case whose result depends on the 2.0/2.1 line (rowtime keep-first without mini-batch:
        // FLINK-37005; an ISO-8601 duration: TimeUtils reads it from 2.1) runs on its line only.
        boolean classpath21 = !flinkVersion.startsWith("2.0");
        if (((rowtime && !keepLast && !miniBatch) || isoTTL) && insertOnlyPlanner != classpath21) {
            return "SKIP the case is for Flink " + caseVersion + ", whose line differs from " + flinkVersion + " here";
        }
        long ttl = ttlText.isEmpty() || ttlText.equals("0") ? 0L : TimeUtils.parseDuration(ttlText).toMillis();

        // The schema: the first element's columns; strings are STRING, numbers BIGINT, the rowtime
        // attribute TIMESTAMP_LTZ(3) (the trace gives it in milliseconds).
        List<String> cols = new ArrayList<>();
        List<String> sqlTypes = new ArrayList<>();
        for (JsonNode st : trace.path("steps")) {
            if (st.has("element")) {
                Iterator<Map.Entry<String, JsonNode>> it = st.get("element").fields();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> e = it.next();
                    cols.add(e.getKey());
                    sqlTypes.add(rowtime && e.getKey().equals(rowTimeCol) ? "TIMESTAMP_LTZ(3)" : e.getValue().isTextual() ? "STRING" : "BIGINT");
                }
                break;
            }
        }
        String sql = q.isTextual() ? q.asText() : structuredSQL(keys, rowtime ? rowTimeCol : procTime, keepLast);

        // The planner's operators: the dedup (function, equaliser, key selector) and the operators
        // between the source and it.
        Map<String, String> plannerOptions = new LinkedHashMap<>(options);
        plannerOptions.remove("state.backend.type"); // the job's backend: given to the harness below
        plannerOptions.remove(QUERY_TIME_AFTER); // the RocksDB backend's, likewise
        PlannedOperator planned =
                new PlannedOperator(sql, cols, sqlTypes, procTime, rowTimeCol, rowtime, plannerOptions, generateUpdateBefore, keys);
        planned.openUpstream();
        // state.backend.type is a job option, not the planner's: the harness gets the backend.
        boolean rocksdb = "rocksdb".equalsIgnoreCase(options.getOrDefault("state.backend.type", "hashmap").trim());
        org.apache.flink.runtime.state.StateBackend backend = null;
        if (rocksdb) {
            // EmbeddedRocksDBStateBackend configured as a job's would be: the compaction filter's
            // query-time-after-num-entries when the case sets it (RocksDBConfigurableOptions).
            org.apache.flink.configuration.Configuration conf = new org.apache.flink.configuration.Configuration();
            if (options.containsKey(QUERY_TIME_AFTER)) {
                conf.setString(QUERY_TIME_AFTER, options.get(QUERY_TIME_AFTER).trim());
            }
            backend = new org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend()
                    .configure(conf, FlinkOracle.class.getClassLoader());
        }
        KeyedOneInputStreamOperatorTestHarness<RowData, RowData, RowData> h = planned.dedupHarness(backend);
        h.open();
        operatorFunction = null;
        String fn;
        if (h.getOperator() instanceof KeyedProcessOperator) {
            operatorFunction = ((KeyedProcessOperator<?, ?, ?>) h.getOperator()).getUserFunction();
            fn = operatorFunction.getClass().getSimpleName();
        } else {
            Field bf = org.apache.flink.table.runtime.operators.bundle.AbstractMapBundleOperator.class.getDeclaredField("function");
            bf.setAccessible(true);
            fn = bf.get(h.getOperator()).getClass().getSimpleName();
        }
        usedFunctions.add(fn);
        RowType src = planned.sourceType, outType = planned.dedupOutType;

        List<String> expected = Files.readAllLines(new File(f.getPath().replaceAll("\\.json$", ".expected.jsonl")).toPath());
        expected.removeIf(String::isBlank);
        JsonNode steps = trace.path("steps");
        if (expected.size() != steps.size()) {
            return "expected file has " + expected.size() + " lines for " + steps.size() + " steps";
        }
        long ttlNow = 0;
        int seen = 0;
        StringBuilder report = new StringBuilder();
        String diff = null;
        for (int i = 0; i < steps.size(); i++) {
            JsonNode st = steps.get(i);
            if (st.has("element")) {
                GenericRowData row = new GenericRowData(RowKind.INSERT, src.getFieldCount());
                for (int c = 0; c < src.getFieldCount(); c++) {
                    String name = src.getFieldNames().get(c);
                    JsonNode v = st.get("element").get(name);
                    if (v == null) {
                        return "steps[" + i + "]: the planner's source has a column " + name + " the trace lacks";
                    }
                    LogicalType ty = src.getTypeAt(c);
                    row.setField(c, ty instanceof VarCharType ? StringData.fromString(v.asText())
                            : ty instanceof LocalZonedTimestampType ? (Object) TimestampData.fromEpochMillis(v.asLong())
                            : (Object) v.asLong());
                }
                for (RowData r : planned.throughUpstream(row)) {
                    h.processElement(new StreamRecord<>(r));
                }
            } else if (st.has("processingTime")) {
                h.setProcessingTime(st.get("processingTime").asLong());
                planned.setUpstreamProcessingTime(st.get("processingTime").asLong());
            } else if (st.has("ttlTime")) {
                ttlNow = st.get("ttlTime").asLong();
                h.setStateTtlProcessingTime(ttlNow);
            } else if (st.has("watermark")) {
                h.processWatermark(st.get("watermark").asLong());
            } else if (st.has("endOfInput")) {
                h.processWatermark(Long.MAX_VALUE);
            } else if (st.has("compact")) {
                if (!rocksdb) {
                    return "steps[" + i + "]: a compact step needs state.backend.type rocksdb";
                }
                compactAll(h);
            } else {
                return "steps[" + i + "]: unknown step " + st;
            }
            // What this step emitted, per key, in order.
            Map<String, List<String>> got = new TreeMap<>();
            Object[] out = h.getOutput().toArray();
            for (int j = seen; j < out.length; j++) {
                if (out[j] instanceof StreamRecord) {
                    RowData r = (RowData) ((StreamRecord<?>) out[j]).getValue();
                    ObjectNode o = JsonNodeFactory.instance.objectNode();
                    for (String col : cols) {
                        int c = outType.getFieldNames().indexOf(col);
                        LogicalType ty = outType.getTypeAt(c);
                        if (ty instanceof VarCharType) {
                            o.put(col, r.getString(c).toString());
                        } else if (ty instanceof LocalZonedTimestampType) {
                            o.put(col, r.getTimestamp(c, 3).getMillisecond());
                        } else {
                            o.put(col, r.getLong(c));
                        }
                    }
                    got.computeIfAbsent(keyOf(o, keys), k -> new ArrayList<>()).add(r.getRowKind().shortString() + " " + canon(o));
                }
            }
            seen = out.length;
            int logical, physical;
            if (rocksdb && ttl > 0) {
                // RocksDB with TTL: RocksDB's own entries, read raw (what is physically there:
                // expired values the compaction filter has not dropped yet included), and those
                // whose TTL timestamp is not expired at the TTL clock (logical).
                int[] lp = rocksTtlEntries(h, ttl, ttlNow);
                logical = lp[0];
                physical = lp[1];
            } else if (rocksdb) {
                logical = physical = rocksEntries(h);
            } else {
                logical = logicalEntries(h, ttl, ttlNow);
                physical = h.numKeyedStateEntries();
            }
            totalSteps++;
            JsonNode exp = JSON.readTree(expected.get(i));
            Map<String, List<String>> want = new TreeMap<>();
            for (JsonNode e : exp.path("emitted")) {
                want.computeIfAbsent(keyOf(e.get("row"), keys), k -> new ArrayList<>()).add(e.get("kind").asText() + " " + canon(e.get("row")));
            }
            int wantLogical = exp.path("logicalState").asInt(-1);
            int wantPhysical = exp.path("physicalState").asInt(-1);
            if (physical < wantPhysical) {
                cleanedEarlier++;
            }
            report.append(String.format("  step %d: emitted %s logical %d physical %d%n", i, got, logical, physical));
            String d = null;
            if (!got.equals(want)) {
                d = "emitted " + got + ", expected " + want;
            } else if (logical != wantLogical) {
                d = "logical state " + logical + ", expected " + wantLogical;
            } else if (rocksdb && physical != wantPhysical) {
                d = "physical state (RocksDB's entries, read raw) " + physical + ", expected " + wantPhysical;
            } else if (physical < wantLogical || physical > wantPhysical) {
                d = "physical state (numKeyedStateEntries) " + physical + ", expected between " + wantLogical + " and " + wantPhysical;
            } else if (exp.has("numLateRecordsDropped") != fn.equals("RowTimeDeduplicateKeepFirstRowFunction")) {
                d = "numLateRecordsDropped present in the expected line iff the function is RowTimeDeduplicateKeepFirstRowFunction (it is " + fn + ")";
            } else if (exp.has("numLateRecordsDropped")) {
                long late = lateDropped();
                if (late != exp.get("numLateRecordsDropped").asLong()) {
                    d = "numLateRecordsDropped " + late + ", expected " + exp.get("numLateRecordsDropped");
                }
            }
            if (d != null && diff == null) {
                diff = "step " + i + " (" + fn + ", planned as " + planned.dedupName + " after " + planned.upstreamNames() + "): " + d;
            }
        }
        h.close();
        planned.closeUpstream();
        if (diff != null) {
            return diff + "\n" + report;
        }
        if (System.getProperty("oracle.verbose") != null) {
            System.out.print(report);
        }
        return null;
    }

    private static final String PKG = "org.apache.flink.table.runtime.operators.deduplicate.";

    private Object operatorFunction;

    /** The runtime functions the planner picked, over every case run. */
    private final java.util.Set<String> usedFunctions = new java.util.TreeSet<>();

    /** Steps run, and steps where Flink held fewer entries than the model's physical count. */
    private int totalSteps, cleanedEarlier;

    private long lateDropped() throws Exception {
        Method m = operatorFunction.getClass().getDeclaredMethod("getNumLateRecordsDropped");
        m.setAccessible(true);
        return ((org.apache.flink.metrics.Counter) m.invoke(operatorFunction)).getCount();
    }

    private static int exp0(String line, String field) throws Exception {
        return JSON.readTree(line).path(field).asInt(-1);
    }

    /** The RocksDB backend's compaction filter option (RocksDBConfigurableOptions). */
    static final String QUERY_TIME_AFTER = "state.backend.rocksdb.compaction.filter.query-time-after-num-entries";

    /** The RocksDB keyed backend's RocksDB instance and its key/value states' column families. */
    @SuppressWarnings("unchecked")
    private static Map<String, org.apache.flink.state.rocksdb.RocksDBKeyedStateBackend.RocksDbKvStateInfo> rocksStates(
            KeyedOneInputStreamOperatorTestHarness<?, ?, ?> h, org.rocksdb.RocksDB[] db) throws Exception {
        Object backend = h.getOperator().getKeyedStateBackend();
        Field fdb = org.apache.flink.state.rocksdb.RocksDBKeyedStateBackend.class.getDeclaredField("db");
        fdb.setAccessible(true);
        db[0] = (org.rocksdb.RocksDB) fdb.get(backend);
        Field fkv = org.apache.flink.state.rocksdb.RocksDBKeyedStateBackend.class.getDeclaredField("kvStateInformation");
        fkv.setAccessible(true);
        Map<String, org.apache.flink.state.rocksdb.RocksDBKeyedStateBackend.RocksDbKvStateInfo> out = new LinkedHashMap<>();
        for (Map.Entry<String, org.apache.flink.state.rocksdb.RocksDBKeyedStateBackend.RocksDbKvStateInfo> e :
                ((Map<String, org.apache.flink.state.rocksdb.RocksDBKeyedStateBackend.RocksDbKvStateInfo>) fkv.get(backend)).entrySet()) {
            // Key/value states only (the timers' priority queues have their own meta info).
            if (e.getValue().metaInfo instanceof org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo) {
                out.put(e.getKey(), e.getValue());
            }
        }
        return out;
    }

    /**
     * A full manual compaction of every key/value state (RocksDB's compactRange, which flushes
     * the memtable first, as RocksDBKeyedStateBackend.compactState runs it): Flink's TTL
     * compaction filter drops the entries expired at the TTL clock.
     */
    private static void compactAll(KeyedOneInputStreamOperatorTestHarness<?, ?, ?> h) throws Exception {
        org.rocksdb.RocksDB[] db = new org.rocksdb.RocksDB[1];
        for (org.apache.flink.state.rocksdb.RocksDBKeyedStateBackend.RocksDbKvStateInfo info : rocksStates(h, db).values()) {
            db[0].compactRange(info.columnFamilyHandle);
        }
    }

    /**
     * Counts RocksDB's entries of every key/value state, read raw with an iterator: {logical,
     * physical}. Physical is every entry RocksDB returns (a read's clear is a delete, gone; an
     * expired value the compaction filter has not dropped is there). Logical leaves out the
     * entries of a TTL state (TtlSerializer: the 8-byte lastAccessTimestamp first, big-endian)
     * expired at now (TtlUtils.expired).
     */
    private static int[] rocksTtlEntries(KeyedOneInputStreamOperatorTestHarness<?, ?, ?> h, long ttl, long now) throws Exception {
        org.rocksdb.RocksDB[] db = new org.rocksdb.RocksDB[1];
        int logical = 0, physical = 0;
        for (org.apache.flink.state.rocksdb.RocksDBKeyedStateBackend.RocksDbKvStateInfo info : rocksStates(h, db).values()) {
            Object ser = ((org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo<?, ?>) info.metaInfo).getStateSerializer();
            boolean withTtl = ser.getClass().getName().contains("TtlSerializer");
            try (org.rocksdb.RocksIterator it = db[0].newIterator(info.columnFamilyHandle)) {
                for (it.seekToFirst(); it.isValid(); it.next()) {
                    physical++;
                    if (System.getProperty("oracle.verbose") != null) {
                        // The serialized sizes docs/flink.md ("State bytes", RocksDB) derives.
                        System.out.printf("    rocksdb %s: key %d bytes, value %d bytes%n", info.metaInfo.getName(), it.key().length, it.value().length);
                    }
                    if (!withTtl) {
                        logical++;
                        continue;
                    }
                    long ts = java.nio.ByteBuffer.wrap(it.value(), 0, 8).getLong();
                    if (!TtlUtils.expired(ts, ttl, now)) {
                        logical++;
                    }
                }
                it.status();
            }
        }
        return new int[] {logical, physical};
    }

    /** Counts the keys held in every keyed state of a RocksDB backend (no TTL: all are live). */
    @SuppressWarnings("unchecked")
    private static int rocksEntries(KeyedOneInputStreamOperatorTestHarness<?, ?, ?> h) throws Exception {
        Object backend = h.getOperator().getKeyedStateBackend();
        Field f = null;
        for (Class<?> c = backend.getClass(); c != null && f == null; c = c.getSuperclass()) {
            try {
                f = c.getDeclaredField("kvStateInformation");
            } catch (NoSuchFieldException e) {
                // look in the superclass
            }
        }
        if (f == null) {
            throw new IllegalStateException("no kvStateInformation in " + backend.getClass());
        }
        f.setAccessible(true);
        int n = 0;
        for (String state : ((Map<String, ?>) f.get(backend)).keySet()) {
            try (java.util.stream.Stream<?> keys = ((org.apache.flink.runtime.state.KeyedStateBackend<?>) backend)
                    .getKeys(state, org.apache.flink.runtime.state.VoidNamespace.INSTANCE)) {
                n += (int) keys.count();
            }
        }
        return n;
    }

    /** Counts the entries a read would see: TTL values not expired at now, and every other value. */
    @SuppressWarnings("unchecked")
    private static int logicalEntries(KeyedOneInputStreamOperatorTestHarness<?, ?, ?> h, long ttl, long now) throws Exception {
        AbstractStreamOperator<?> op = h.getOperator();
        HeapKeyedStateBackend<?> backend = (HeapKeyedStateBackend<?>) op.getKeyedStateBackend();
        Field f = HeapKeyedStateBackend.class.getDeclaredField("registeredKVStates");
        f.setAccessible(true);
        Map<String, ?> tables = (Map<String, ?>) f.get(backend);
        int n = 0;
        for (Object table : tables.values()) {
            for (Object e : (Iterable<Object>) table) {
                Object s = ((StateEntry<?, ?, ?>) e).getState();
                if (s instanceof TtlValue) {
                    if (!TtlUtils.expired(((TtlValue<?>) s).getLastAccessTimestamp(), ttl, now)) {
                        n++;
                    }
                } else if (s != null) {
                    n++;
                }
            }
        }
        return n;
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

    /** The ROW_NUMBER query of a trace's structured form. */
    private static String structuredSQL(List<String> keys, String order, boolean keepLast) {
        StringBuilder b = new StringBuilder("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (");
        if (!keys.isEmpty()) {
            b.append("PARTITION BY ");
            for (int i = 0; i < keys.size(); i++) {
                b.append(i > 0 ? ", " : "").append('`').append(keys.get(i)).append('`');
            }
            b.append(' ');
        }
        b.append("ORDER BY `").append(order).append("` ").append(keepLast ? "DESC" : "ASC");
        return b.append(") AS rn FROM events) WHERE rn = 1").toString();
    }
}
