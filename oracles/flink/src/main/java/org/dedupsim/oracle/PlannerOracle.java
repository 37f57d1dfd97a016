package org.dedupsim.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;

import java.io.File;
import java.util.Iterator;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Asks Flink's own planner (TableEnvironment.explainSql) which operator it picks for every query of
 * sim/flink/testdata/planner/queries.json and compares it with the query's "want": the runtime
 * function StreamExecDeduplicate's translators build for the Deduplicate node of the optimized
 * execution plan, or "Rank" for a Top-N. Exits 1 on any difference. A query with a "version" runs
 * only on that side of the 2.0/2.1 change; the others run on every version.
 */
public final class PlannerOracle {
    private static final Pattern DEDUP =
            Pattern.compile("Deduplicate\\(keep=\\[(FirstRow|LastRow)\\], key=\\[[^\\]]*\\], order=\\[(PROCTIME|ROWTIME)\\](?:, outputInsertOnly=\\[(true|false)\\])?\\)");
    private static final Pattern RANK = Pattern.compile("(?m)^(?:\\s*\\+- )?Rank\\(");

    private static final String DDL =
            "CREATE TABLE events (event_id STRING, id STRING, v BIGINT, ts TIMESTAMP(3), "
                    + "event_time TIMESTAMP(3), proc_time AS PROCTIME(), "
                    + "WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND) "
                    + "WITH ('connector' = 'datagen')";

    private static String rootMessage(Throwable t) {
        String msg = String.valueOf(t.getMessage());
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c.getMessage() != null) {
                msg = c.getMessage();
            }
        }
        return msg.split("\n")[0];
    }

    /** Runs the check; returns the exit status. */
    static int run(String[] args) throws Exception {
        String flinkVersion = System.getProperty("flink.version", "2.3.0");
        String minor = flinkVersion.replaceAll("^(\\d+\\.\\d+).*", "$1");
        JsonNode qs = new ObjectMapper().readTree(new File(args[0]));
        int failed = 0, passed = 0, skipped = 0;
        Map<String, TableEnvironment> envs = new java.util.HashMap<>();
        for (JsonNode q : qs) {
            String name = q.path("name").asText();
            String version = q.path("version").asText("2.3");
            boolean v21 = !version.startsWith("2.0");
            boolean cp21 = !minor.equals("2.0");
            if (q.has("version") && v21 != cp21) {
                skipped++;
                System.out.println("skip planner: " + name + " (version " + version + ")");
                continue;
            }
            String optsKey = q.path("options").toString();
            TableEnvironment tEnv = envs.get(optsKey);
            if (tEnv == null) {
                tEnv = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
                Iterator<Map.Entry<String, JsonNode>> it = q.path("options").fields();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> e = it.next();
                    tEnv.getConfig().set(e.getKey(), e.getValue().asText());
                }
                tEnv.executeSql(DDL);
                envs.put(optsKey, tEnv);
            }
            boolean miniBatch = q.path("options").path("table.exec.mini-batch.enabled").asText("false").equals("true");
            String plan;
            try {
                plan = tEnv.explainSql(q.path("sql").asText());
            } catch (Exception e) {
                String msg = rootMessage(e);
                String want = q.path("want").asText();
                if (want.startsWith("error: ") && msg.contains(want.substring(7))) {
                    passed++;
                    System.out.println("ok   planner: " + name + ": Flink rejects it: " + msg);
                } else {
                    failed++;
                    System.out.println("FAIL planner: " + name + ": Flink rejects the query: " + msg + "; dedupsim says " + want);
                }
                continue;
            }
            String exec = plan.contains("== Optimized Execution Plan ==")
                    ? plan.substring(plan.indexOf("== Optimized Execution Plan =="))
                    : plan;
            String got;
            Matcher m = DEDUP.matcher(exec);
            if (m.find()) {
                boolean last = m.group(1).equals("LastRow");
                boolean rowtime = m.group(2).equals("ROWTIME");
                boolean insertOnly = "true".equals(m.group(3));
                if (!rowtime) {
                    got = miniBatch
                            ? (last ? "ProcTimeMiniBatchDeduplicateKeepLastRowFunction" : "ProcTimeMiniBatchDeduplicateKeepFirstRowFunction")
                            : (last ? "ProcTimeDeduplicateKeepLastRowFunction" : "ProcTimeDeduplicateKeepFirstRowFunction");
                } else if (miniBatch) {
                    got = "RowTimeMiniBatchDeduplicateFunction";
                } else if (!last && insertOnly) {
                    got = "RowTimeDeduplicateKeepFirstRowFunction";
                } else {
                    got = "RowTimeDeduplicateFunction";
                }
                got += " [" + m.group(0) + "]";
            } else if (RANK.matcher(exec).find()) {
                got = "Rank";
            } else {
                got = "neither Deduplicate nor Rank:\n" + exec;
            }
            String want = q.path("want").asText();
            if (got.equals(want) || got.startsWith(want + " [")) {
                passed++;
                System.out.println("ok   planner: " + name + ": " + got);
            } else {
                failed++;
                System.out.println("FAIL planner: " + name + ": Flink picks " + got + ", dedupsim says " + want);
            }
        }
        System.out.printf("Flink %s planner: %d passed, %d skipped (other version), %d failed%n", flinkVersion, passed, skipped, failed);
        return failed == 0 ? 0 : 1;
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args));
    }
}
