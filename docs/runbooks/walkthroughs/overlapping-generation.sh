#!/usr/bin/env bash
# Runbook walkthrough: a correction generation meets an older overlapping generation in flight.
RECEIVER_PROCESSING_SECONDS=3
source "$(dirname "$0")/_prelude.sh"

say 'generation 0 of [2026-08-01, 2026-08-07): two async jobs, accepted, not finished yet'
run 'dpone deliver examples/workloads/measurements_async.yaml --registry examples --interval-start 2026-08-01 --interval-end 2026-08-07'
old=$(latest_delivery)
say 'a correction of the same window is authored as generation 1 (correction_revision: 1)'
run "sed -i 's/^    generation_from: scheduled_interval$/&\n    correction_revision: 1/' examples/workloads/measurements_async.yaml"
run 'dpone deliver examples/workloads/measurements_async.yaml --registry examples --interval-start 2026-08-01 --interval-end 2026-08-07'
say 'observe the older generation to its end (read-only polling; its unsent child is now stale)'
run "dpone delivery resume --registry examples --operation-id $old --apply --wait"
say 'the older job is terminal: run the correction again; it resumes its admitted delivery'
run 'dpone deliver examples/workloads/measurements_async.yaml --registry examples --interval-start 2026-08-01 --interval-end 2026-08-07 --wait'
run 'dpone delivery list --registry examples'
run 'curl -s -H "Authorization: Bearer $TOKEN" $RECEIVER/mock/_ledger | jq "{mutations_total, duplicate_mutations}"'
