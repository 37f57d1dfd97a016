#!/usr/bin/env bash
# Fits a scenario to the sample log and plans on it: the "bring your log"
# path end to end. The log (events.csv.gz) is made by make_log.py, outside
# dedupsim's generator, from the parameters in its header.
# Usage: ./experiments/fit-sample/run.sh [OUT]   (from the repository root;
#        OUT defaults to a temporary folder)
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=${1:-$tmp/fit-sample}
bin=$tmp/simulate
go build -o "$bin" ./cmd/simulate

# 1. Fit: the scenario, the log's own scenario, the report with both run
#    side by side through the same queries.
"$bin" fit experiments/fit-sample/events.csv.gz \
  --id event_id --event-time event_time --arrival-time ingest_time --customer customer_id \
  --name sample --out "$out" \
  --query 'withWatermark("event_time", "15 seconds").dropDuplicatesWithinWatermark(["event_id"])' \
  --query 'withWatermark("event_time", "10 minutes").dropDuplicatesWithinWatermark(["event_id"])' \
  --query 'dropDuplicates(["event_id"])'

# 2. Plan on the fitted traffic: the smallest within-watermark delay that
#    misses at most 0.1% of the duplicates. The sample's bad clocks (3 min
#    ahead) lose events whatever the delay below 3 min, hence the loose
#    false-drop target; at 100 originals/s the fitted traffic is scaled,
#    not the log.
"$bin" plan "$out/sample.yaml" --query q1 --seeds 3 --max-missed-rate 0.001 --max-false-drop-rate 0.5 --quiet
"$bin" plan "$out/sample.yaml" --query q1 --seeds 3 --max-missed-rate 0.001 --max-false-drop-rate 0.5 --production-rate 100/s --quiet
echo "fit report: $out/report.html" >&2
