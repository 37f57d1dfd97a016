package org.dedupsim.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.runtime.state.StateEntry;
import org.apache.flink.runtime.state.heap.HeapKeyedStateBackend;
import org.apache.flink.runtime.state.ttl.TtlUtils;
import org.apache.flink.runtime.state.ttl.TtlValue;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.generated.GeneratedRecordEqualiser;
import org.apache.flink.table.runtime.generated.RecordEqualiser;
import org.apache.flink.table.runtime.operators.bundle.KeyedMapBundleOperator;
import org.apache.flink.table.runtime.operators.bundle.MapBundleFunction;
import org.apache.flink.table.runtime.operators.bundle.trigger.CountBundleTrigger;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.TimeUtils;

import java.io.File;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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

    public static void main(String[] args) throws Exception {
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
            System.exit(1);
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
        System.out.printf(
                "Flink %s: %d passed, %d skipped (need a newer Flink), %d failed; physical state"
                        + " below dedupsim's physicalState (incremental cleanup) at %d of %d steps%n",
                version, passed, skipped, failed, oracle.cleanedEarlier, oracle.totalSteps);
        System.exit(failed == 0 ? 0 : 1);
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

        // Options, parsed with Flink's own TimeUtils.
        JsonNode opts = trace.path("options");
        long ttl =
                opts.has("table.exec.state.ttl")
                        ? TimeUtils.parseDuration(opts.get("table.exec.state.ttl").asText()).toMillis()
                        : 0L;
        boolean miniBatch = opts.path("table.exec.mini-batch.enabled").asText("false").equals("true");
        long miniBatchSize = opts.path("table.exec.mini-batch.size").asLong(-1);
        boolean generateInsert =
                opts.path("table.exec.deduplicate.insert-update-after-sensitive-enabled")
                        .asText("true")
                        .equals("true");
        boolean generateUpdateBefore = trace.path("generateUpdateBefore").asBoolean(false);

        // The schema: the first element's columns; strings are STRING, numbers BIGINT.
        List<String> cols = new ArrayList<>();
        List<LogicalType> types = new ArrayList<>();
        for (JsonNode st : trace.path("steps")) {
            if (st.has("element")) {
                Iterator<Map.Entry<String, JsonNode>> it = st.get("element").fields();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> e = it.next();
                    cols.add(e.getKey());
                    types.add(e.getValue().isTextual() ? VarCharType.STRING_TYPE : new BigIntType());
                }
                break;
            }
        }
        LogicalType[] rowTypes = types.toArray(new LogicalType[0]);
        InternalTypeInfo<RowData> rowType = InternalTypeInfo.ofFields(rowTypes);
        RowDataSerializer serializer = new RowDataSerializer(rowTypes);
        int[] keyIdx = keys.stream().mapToInt(cols::indexOf).toArray();
        for (int i = 0; i < keyIdx.length; i++) {
            if (keyIdx[i] < 0) {
                return "key column " + keys.get(i) + " is not a column";
            }
        }
        int rowtimeIdx = rowtime ? cols.indexOf(rowTimeCol) : -1;

        // The function, as StreamExecDeduplicate's translators pick it.
        String fn;
        OneInputStreamOperator<RowData, RowData> operator;
        GeneratedRecordEqualiser eq = new FieldEqualiser(rowTypes);
        if (miniBatch) {
            MapBundleFunction<?, ?, ?, ?> bf;
            if (!rowtime && keepLast) {
                fn = "ProcTimeMiniBatchDeduplicateKeepLastRowFunction";
                bf = construct(fn, rowType, serializer, ttl, generateUpdateBefore, generateInsert, true, eq);
            } else if (!rowtime) {
                fn = "ProcTimeMiniBatchDeduplicateKeepFirstRowFunction";
                bf = construct(fn, serializer, ttl);
            } else {
                fn = "RowTimeMiniBatchDeduplicateFunction";
                bf = construct(fn, rowType, serializer, ttl, rowtimeIdx, generateUpdateBefore, generateInsert, keepLast);
            }
            @SuppressWarnings({"unchecked", "rawtypes"})
            OneInputStreamOperator<RowData, RowData> op =
                    new KeyedMapBundleOperator(bf, new CountBundleTrigger<RowData>(miniBatchSize));
            operator = op;
        } else {
            KeyedProcessFunction<RowData, RowData, RowData> pf;
            if (!rowtime && keepLast) {
                fn = "ProcTimeDeduplicateKeepLastRowFunction";
                pf = construct(fn, rowType, ttl, generateUpdateBefore, generateInsert, true, eq);
            } else if (!rowtime) {
                fn = "ProcTimeDeduplicateKeepFirstRowFunction";
                pf = construct(fn, ttl);
            } else if (!keepLast && insertOnlyPlanner) {
                fn = "RowTimeDeduplicateKeepFirstRowFunction";
                try {
                    Class.forName(PKG + fn);
                } catch (ClassNotFoundException e) {
                    return "SKIP " + fn + " is not in Flink " + flinkVersion + " (case version " + caseVersion + ")";
                }
                pf = construct(fn, rowType, ttl, rowtimeIdx);
            } else {
                fn = "RowTimeDeduplicateFunction";
                pf = construct(fn, rowType, ttl, rowtimeIdx, generateUpdateBefore, generateInsert, keepLast);
            }
            operator = new KeyedProcessOperator<>(pf);
            operatorFunction = pf;
        }

        RowDataSerializer keySerializer =
                new RowDataSerializer(Arrays.stream(keyIdx).mapToObj(i -> rowTypes[i]).toArray(LogicalType[]::new));
        KeySel selector =
                new KeySel(keyIdx, rowTypes, InternalTypeInfo.ofFields(Arrays.stream(keyIdx).mapToObj(i -> rowTypes[i]).toArray(LogicalType[]::new)));
        KeyedOneInputStreamOperatorTestHarness<RowData, RowData, RowData> h =
                new KeyedOneInputStreamOperatorTestHarness<>(operator, selector, selector.getProducedType());
        h.setup(serializer);
        h.open();

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
                GenericRowData row = new GenericRowData(RowKind.INSERT, cols.size());
                for (int c = 0; c < cols.size(); c++) {
                    JsonNode v = st.get("element").get(cols.get(c));
                    row.setField(c, rowTypes[c] instanceof VarCharType ? StringData.fromString(v.asText()) : (Object) v.asLong());
                }
                h.processElement(new StreamRecord<>(row));
            } else if (st.has("processingTime")) {
                h.setProcessingTime(st.get("processingTime").asLong());
            } else if (st.has("ttlTime")) {
                ttlNow = st.get("ttlTime").asLong();
                h.setStateTtlProcessingTime(ttlNow);
            } else if (st.has("watermark")) {
                h.processWatermark(st.get("watermark").asLong());
            } else if (st.has("endOfInput")) {
                h.processWatermark(Long.MAX_VALUE);
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
                    for (int c = 0; c < cols.size(); c++) {
                        if (rowTypes[c] instanceof VarCharType) {
                            o.put(cols.get(c), r.getString(c).toString());
                        } else {
                            o.put(cols.get(c), r.getLong(c));
                        }
                    }
                    got.computeIfAbsent(keyOf(o, keys), k -> new ArrayList<>()).add(r.getRowKind().shortString() + " " + canon(o));
                }
            }
            seen = out.length;
            int logical = logicalEntries(h, ttl, ttlNow);
            int physical = h.numKeyedStateEntries();
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
                diff = "step " + i + " (" + fn + "): " + d;
            }
        }
        h.close();
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

    /** Steps run, and steps where Flink held fewer entries than the model's physical count. */
    private int totalSteps, cleanedEarlier;

    private long lateDropped() throws Exception {
        Method m = operatorFunction.getClass().getDeclaredMethod("getNumLateRecordsDropped");
        m.setAccessible(true);
        return ((org.apache.flink.metrics.Counter) m.invoke(operatorFunction)).getCount();
    }

    /** Calls the public constructor of the named function taking args (a trailing null filter allowed). */
    @SuppressWarnings("unchecked")
    private static <T> T construct(String name, Object... args) throws Exception {
        Class<?> c = Class.forName(PKG + name);
        for (Constructor<?> k : c.getConstructors()) {
            int n = k.getParameterCount();
            if (n == args.length) {
                return (T) k.newInstance(args);
            }
            if (n == args.length + 1) {
                Object[] padded = Arrays.copyOf(args, n);
                return (T) k.newInstance(padded);
            }
        }
        throw new IllegalStateException("no constructor of " + name + " with " + args.length + " arguments");
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

    /** Keys rows by their PARTITION BY columns as a BinaryRowData, as Flink's planner does. */
    private static final class KeySel implements KeySelector<RowData, RowData>, ResultTypeQueryable<RowData> {
        private final int[] idx;
        private final LogicalType[] types;
        private final InternalTypeInfo<RowData> keyType;
        private transient RowDataSerializer ser;

        KeySel(int[] idx, LogicalType[] types, InternalTypeInfo<RowData> keyType) {
            this.idx = idx;
            this.types = types;
            this.keyType = keyType;
        }

        @Override
        public RowData getKey(RowData row) {
            if (ser == null) {
                ser = new RowDataSerializer(Arrays.stream(idx).mapToObj(i -> types[i]).toArray(LogicalType[]::new));
            }
            GenericRowData k = new GenericRowData(idx.length);
            for (int i = 0; i < idx.length; i++) {
                k.setField(i, ((GenericRowData) row).getField(idx[i]));
            }
            return ser.toBinaryRow(k).copy();
        }

        @Override
        public TypeInformation<RowData> getProducedType() {
            return keyType;
        }
    }

    /** Field-by-field equality, what the planner's generated RecordEqualiser computes. */
    private static final class FieldEqualiser extends GeneratedRecordEqualiser {
        private static final long serialVersionUID = 1L;
        private final LogicalType[] types;

        FieldEqualiser(LogicalType[] types) {
            super("", "", new Object[0]);
            this.types = types;
        }

        @Override
        public RecordEqualiser newInstance(ClassLoader classLoader) {
            RowData.FieldGetter[] getters = new RowData.FieldGetter[types.length];
            for (int i = 0; i < types.length; i++) {
                getters[i] = RowData.createFieldGetter(types[i], i);
            }
            return (RecordEqualiser)
                    (a, b) -> {
                        for (RowData.FieldGetter g : getters) {
                            if (!Objects.equals(g.getFieldOrNull(a), g.getFieldOrNull(b))) {
                                return false;
                            }
                        }
                        return true;
                    };
        }
    }
}
