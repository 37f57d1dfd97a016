// Package sim holds nothing but what every engine's simulation shares: its
// subfolders are the harness (runner, scenario, plan, registry, stores, ...)
// and one folder per engine (spark, flink, kstreams, beam); Spark's
// micro-batch executor is sim/spark/microbatch. The tests of this folder
// check the import rules of the whole module (importmap_test.go,
// engines_importmap_test.go; docs/architecture.md).
package sim
