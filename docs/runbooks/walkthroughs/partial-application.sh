#!/usr/bin/env bash
# Runbook walkthrough: an async replacement job that applied only part of its rows.
source "$(dirname "$0")/_prelude.sh"

say 'the receiver will end the next job incomplete, 120 of its rows applied'
run 'curl -s -X POST -H "Authorization: Bearer $TOKEN" $RECEIVER/mock/_faults -d '"'"'[{"match": {"method": "POST", "path_prefix": "/mock/v1/dataset-jobs"}, "fault": "partial", "accepted_rows": 120}]'"'"'; echo'
run 'dpone deliver examples/workloads/measurements_async.yaml --registry examples --interval-start 2026-08-01 --interval-end 2026-08-04 --wait'
parent=$(latest_delivery)
child="${parent}_0001"
run "dpone delivery inspect --registry examples --operation-id $child"
job=$(dpone delivery inspect --registry examples --operation-id "$child" --format json | jq -r '.children[0].receipt.id')
say 'confirm from the receiver what the job applied: a read-only poll of its receipt'
run "dpone delivery reconcile --registry examples --operation-id $child --receipt-id $job --actor ops-oncall --apply"
say 'no row of the window is replayed on its own: the whole window is replaced by the next generation'
run "sed -i 's/^    generation_from: scheduled_interval$/&\n    correction_revision: 1/' examples/workloads/measurements_async.yaml"
run 'dpone deliver examples/workloads/measurements_async.yaml --registry examples --interval-start 2026-08-01 --interval-end 2026-08-04 --wait'
run 'curl -s -H "Authorization: Bearer $TOKEN" $RECEIVER/mock/_ledger | jq "{mutations_total, rows_by_key, duplicate_mutations}"'
