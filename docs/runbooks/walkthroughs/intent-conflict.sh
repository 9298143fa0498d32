#!/usr/bin/env bash
# Runbook walkthrough: the same delivery keys are delivered again with other bytes.
source "$(dirname "$0")/_prelude.sh"

run 'dpone deliver examples/workloads/measurements_async.yaml --registry examples --interval-start 2026-08-01 --interval-end 2026-08-04 --wait'
say 'a value of 2026-08-03 is corrected in the source after the delivery'
run "sed -i 's/^2026-08-03,\"S-054\",\"Kazan\",24.842,/2026-08-03,\"S-054\",\"Kazan\",24.9,/' examples/data/measurements.csv"
run 'dpone deliver examples/workloads/measurements_async.yaml --registry examples --interval-start 2026-08-01 --interval-end 2026-08-04 --wait'
say 'the new bytes are a new intent: author the next generation of the window'
run "sed -i 's/^    generation_from: scheduled_interval$/&\n    correction_revision: 1/' examples/workloads/measurements_async.yaml"
run 'dpone deliver examples/workloads/measurements_async.yaml --registry examples --interval-start 2026-08-01 --interval-end 2026-08-04 --wait'
run 'curl -s -H "Authorization: Bearer $TOKEN" $RECEIVER/mock/_ledger | jq "{mutations_total, duplicate_mutations}"'
