package org.dedupsim.oracle;

/**
 * The whole Flink suite of one version in one JVM (the planner's start-up is paid once): the cases
 * through the planner's operators in the harness (FlinkOracle), the clock-free cases as Flink SQL
 * jobs (SqlEndToEnd, lines "sql: NAME"), and the planner's choice on the planner queries
 * (PlannerOracle, lines "planner: NAME"). Arguments: the cases folder. Exits 1 when any part fails.
 */
public final class Suite {
    private Suite() {}

    public static void main(String[] args) throws Exception {
        String cases = args[0];
        int status = 0;
        long t = System.nanoTime();
        status |= FlinkOracle.run(new String[] {cases});
        System.out.printf("oracle: harness %.1f s%n", (System.nanoTime() - t) / 1e9);
        t = System.nanoTime();
        status |= SqlEndToEnd.run(new String[] {cases});
        System.out.printf("oracle: SQL end to end %.1f s%n", (System.nanoTime() - t) / 1e9);
        t = System.nanoTime();
        status |= PlannerOracle.run(new String[] {cases + "/planner/queries.json"});
        System.out.printf("oracle: planner %.1f s%n", (System.nanoTime() - t) / 1e9);
        System.out.flush();
        System.exit(status == 0 ? 0 : 1);
    }
}
