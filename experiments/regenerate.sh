#!/usr/bin/env bash
# Regenerates every committed results folder under results/ from the
# scenarios in experiments/: one `simulate run` per scenario (a scenario with
# a sweep: block runs its sweep), then the store comparison.
# Usage: ./experiments/regenerate.sh      (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin=$tmp/simulate
go build -o "$bin" ./cmd/simulate
for f in experiments/*.yaml; do
  name=$(basename "$f" .yaml)
  # production-day runs for a long time (not in CI, no committed results).
  if [ "$name" = store-comparison ] || [ "$name" = production-day ]; then
    continue
  fi
  echo "== $name" >&2
  "$bin" run "$f" --quiet --out "results/$name" >/dev/null
done
if [ -f experiments/store-comparison.yaml ]; then
  echo "== store-comparison" >&2
  "$bin" bench-stores experiments/store-comparison.yaml --quiet --out results/store-comparison >/dev/null
fi
