package org.dedupsim.oracle;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.SimpleOperatorFactory;
import org.apache.flink.streaming.api.operators.StreamOperatorFactory;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.streaming.api.transformations.SourceTransformation;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A dedup query as Flink's own planner compiles it: the SQL is planned by a StreamTableEnvironment
 * over a table of the trace's columns (plus {@code proc_time AS PROCTIME()} and, for a rowtime
 * query, a WATERMARK on the rowtime column) with the trace's options, and translated to
 * transformations. The deduplicate transformation's operator factory (the planner's choice of
 * function, with the generated record equaliser), its key selector (the generated projection to a
 * BinaryRowData key) and key type are taken as they are; so are the one-input operators between
 * the source and the dedup (the planner's Calc that materialises the rows, the watermark and
 * mini-batch assigners). Nothing is hand-written: a row enters as the source's output row and goes
 * through the planner's operators; only the watermarks of the upstream assigners are dropped, since
 * a trace gives the dedup's watermarks explicitly.
 */
final class PlannedOperator {
    /** The table environment every case is planned in (created by the first). */
    private static StreamTableEnvironment tEnv;

    /** The options a case may set, with Flink's defaults, set before every case's own. */
    static final String[] RESET = {
        "table.exec.state.ttl", "0 ms",
        "table.exec.mini-batch.enabled", "false",
        "table.exec.mini-batch.size", "-1",
        "table.exec.mini-batch.allow-latency", "0 ms",
        "table.exec.deduplicate.insert-update-after-sensitive-enabled", "true",
    };

    /** The dedup's operator factory, key selector and key type, and the upstream chain. */
    final StreamOperatorFactory<RowData> dedup;
    final KeySelector<RowData, RowData> keySelector;
    final TypeInformation<RowData> keyType;
    final RowType sourceType, dedupInType, dedupOutType;
    final String dedupName;
    private final List<OneInputTransformation<RowData, RowData>> upstream = new ArrayList<>();
    private final List<OneInputStreamOperatorTestHarness<RowData, RowData>> upstreamHarnesses = new ArrayList<>();

    /**
     * Plans sql over a table of the given columns (SQL types) and options; generateUpdateBefore
     * picks the sink's changelog mode (all kinds: the planner generates -U; upsert: it does not).
     */
    @SuppressWarnings("unchecked")
    PlannedOperator(
            String sql,
            List<String> cols,
            List<String> sqlTypes,
            String procTime,
            String rowTime,
            boolean rowtimeQuery,
            Map<String, String> options,
            boolean generateUpdateBefore,
            List<String> keys)
            throws Exception {
        // One table environment for every case (planning is what costs): the options are reset to
        // Flink's defaults and the case's set before each plan; the table is temporary.
        if (tEnv == null) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(1);
            tEnv = StreamTableEnvironment.create(env, EnvironmentSettings.inStreamingMode());
        }
        for (int i = 0; i < RESET.length; i += 2) {
            tEnv.getConfig().set(RESET[i], RESET[i + 1]);
        }
        for (Map.Entry<String, String> e : options.entrySet()) {
            tEnv.getConfig().set(e.getKey(), e.getValue());
        }
        tEnv.executeSql("DROP TEMPORARY TABLE IF EXISTS events");
        StringBuilder ddl = new StringBuilder("CREATE TEMPORARY TABLE events (");
        for (int i = 0; i < cols.size(); i++) {
            // Key columns NOT NULL, so that an upsert sink can declare them its primary key.
            ddl.append('`').append(cols.get(i)).append("` ").append(sqlTypes.get(i))
                    .append(keys.contains(cols.get(i)) ? " NOT NULL" : "").append(", ");
        }
        ddl.append('`').append(procTime).append("` AS PROCTIME()");
        if (rowtimeQuery) {
            ddl.append(", WATERMARK FOR `").append(rowTime).append("` AS `").append(rowTime).append('`');
        }
        ddl.append(") WITH ('connector' = 'datagen')");
        tEnv.executeSql(ddl.toString());
        Table t = tEnv.sqlQuery(sql);
        DataStream<Row> out;
        if (generateUpdateBefore) {
            out = tEnv.toChangelogStream(t);
        } else {
            // An upsert sink keyed by the PARTITION BY columns: no -U needed.
            org.apache.flink.table.api.Schema.Builder schema = org.apache.flink.table.api.Schema.newBuilder();
            schema.fromResolvedSchema(t.getResolvedSchema());
            if (!keys.isEmpty()) {
                schema.primaryKey(keys);
            }
            out = tEnv.toChangelogStream(t, schema.build(), keys.isEmpty() ? ChangelogMode.all() : ChangelogMode.upsert());
        }
        // Walk from the sink side to the source: the deduplicate transformation, then its inputs.
        OneInputTransformation<RowData, RowData> found = null;
        List<Transformation<?>> queue = new ArrayList<>();
        queue.add(out.getTransformation());
        Transformation<?> source = null;
        List<OneInputTransformation<RowData, RowData>> belowDedup = new ArrayList<>();
        while (!queue.isEmpty()) {
            Transformation<?> tr = queue.remove(0);
            if (found == null && tr instanceof OneInputTransformation && tr.getName().contains("Deduplicate")) {
                found = (OneInputTransformation<RowData, RowData>) tr;
            } else if (found != null && tr instanceof OneInputTransformation) {
                belowDedup.add(0, (OneInputTransformation<RowData, RowData>) tr);
            }
            if (tr instanceof SourceTransformation || tr.getInputs().isEmpty()) {
                source = tr;
            }
            if (tr.getInputs().size() > 1) {
                throw new IllegalStateException("the plan has a transformation with several inputs: " + tr);
            }
            queue.addAll(tr.getInputs());
        }
        if (found == null) {
            throw new IllegalStateException("the planner made no Deduplicate transformation for " + sql);
        }
        dedupName = found.getName();
        dedup = (StreamOperatorFactory<RowData>) found.getOperatorFactory();
        keySelector = (KeySelector<RowData, RowData>) found.getStateKeySelector();
        keyType = (TypeInformation<RowData>) found.getStateKeyType();
        dedupInType = ((InternalTypeInfo<RowData>) found.getInputType()).toRowType();
        dedupOutType = ((InternalTypeInfo<RowData>) found.getOutputType()).toRowType();
        sourceType = ((InternalTypeInfo<RowData>) source.getOutputType()).toRowType();
        upstream.addAll(belowDedup);
    }

    /** Opens the upstream operators' harnesses (a fresh chain per case). */
    @SuppressWarnings("unchecked")
    void openUpstream() throws Exception {
        for (OneInputTransformation<RowData, RowData> tr : upstream) {
            RowDataSerializer in = new RowDataSerializer(((InternalTypeInfo<RowData>) tr.getInputType()).toRowType());
            StreamOperatorFactory<RowData> f = tr.getOperatorFactory();
            OneInputStreamOperatorTestHarness<RowData, RowData> h =
                    f instanceof SimpleOperatorFactory
                            ? new OneInputStreamOperatorTestHarness<>((OneInputStreamOperator<RowData, RowData>) ((SimpleOperatorFactory<RowData>) f).getOperator(), in)
                            : new OneInputStreamOperatorTestHarness<RowData, RowData>(f, 128, 1, 0);
            h.setup(new RowDataSerializer(((InternalTypeInfo<RowData>) tr.getOutputType()).toRowType()));
            h.open();
            upstreamHarnesses.add(h);
        }
    }

    /** The upstream operators' names, source side first. */
    List<String> upstreamNames() {
        List<String> n = new ArrayList<>();
        for (OneInputTransformation<RowData, RowData> tr : upstream) {
            n.add(tr.getName());
        }
        return n;
    }

    /** Sets the processing time of the upstream operators (PROCTIME() reads it). */
    void setUpstreamProcessingTime(long t) throws Exception {
        for (OneInputStreamOperatorTestHarness<RowData, RowData> h : upstreamHarnesses) {
            h.setProcessingTime(t);
        }
    }

    /**
     * Sends a source row through the planner's upstream operators and returns the rows that reach
     * the dedup (their watermarks dropped), as the keyed exchange delivers them: binary copies.
     */
    List<RowData> throughUpstream(RowData sourceRow) throws Exception {
        List<RowData> rows = new ArrayList<>();
        rows.add(sourceRow);
        for (OneInputStreamOperatorTestHarness<RowData, RowData> h : upstreamHarnesses) {
            List<RowData> next = new ArrayList<>();
            int before = h.getOutput().size();
            for (RowData r : rows) {
                h.processElement(new StreamRecord<>(r));
            }
            Object[] o = h.getOutput().toArray();
            for (int i = before; i < o.length; i++) {
                if (o[i] instanceof StreamRecord) {
                    next.add((RowData) ((StreamRecord<?>) o[i]).getValue());
                }
            }
            h.getOutput().clear();
            rows = next;
        }
        RowDataSerializer ser = new RowDataSerializer(dedupInType);
        List<RowData> bin = new ArrayList<>();
        for (RowData r : rows) {
            if (r.getRowKind() != RowKind.INSERT) {
                throw new IllegalStateException("the upstream operators made a " + r.getRowKind() + " row");
            }
            bin.add(ser.toBinaryRow(r).copy());
        }
        return bin;
    }

    /** A keyed harness around the planner's dedup operator, on the given backend (null: heap). */
    KeyedOneInputStreamOperatorTestHarness<RowData, RowData, RowData> dedupHarness(org.apache.flink.runtime.state.StateBackend backend) throws Exception {
        @SuppressWarnings("unchecked")
        KeyedOneInputStreamOperatorTestHarness<RowData, RowData, RowData> h =
                dedup instanceof SimpleOperatorFactory
                        ? new KeyedOneInputStreamOperatorTestHarness<>((OneInputStreamOperator<RowData, RowData>) ((SimpleOperatorFactory<RowData>) dedup).getOperator(), keySelector, keyType)
                        : new KeyedOneInputStreamOperatorTestHarness<>((OneInputStreamOperatorFactory<RowData, RowData>) dedup, keySelector, keyType);
        if (backend != null) {
            h.setStateBackend(backend);
        }
        h.setup(new RowDataSerializer(dedupOutType));
        return h;
    }

    void closeUpstream() throws Exception {
        for (OneInputStreamOperatorTestHarness<RowData, RowData> h : upstreamHarnesses) {
            h.close();
        }
        upstreamHarnesses.clear();
    }
}
