#!/usr/bin/env bash
# Runbook walkthrough: a sync batch whose connection dropped after the receiver applied it.
source "$(dirname "$0")/_prelude.sh"

say 'the receiver will apply the next batch and drop the connection before answering'
run 'curl -s -X POST -H "Authorization: Bearer $TOKEN" $RECEIVER/mock/_faults -d '"'"'[{"match": {"method": "POST", "path_prefix": "/mock/v1/batches/"}, "fault": "commit_then_drop"}]'"'"'; echo'
run 'dpone deliver examples/workloads/measurements_sync.yaml --registry examples --interval-start 2026-08-01 --interval-end 2026-08-15'
parent=$(latest_delivery)
child="${parent}_0001"
run "dpone delivery inspect --registry examples --operation-id $child"
say 'the receiver console (here its ledger) shows the batch of this delivery key applied in full'
run 'curl -s -H "Authorization: Bearer $TOKEN" $RECEIVER/mock/_ledger | jq "{mutations_total, rows_by_key}"'
say 'the operator attests what the console shows'
run 'cat > evidence.json <<EOF
{"schema": "dpone.operator_evidence.v1", "effect": "applied", "accepted_rows": 630, "rejected_rows": 0,
 "receiver_reference": "batch-000001 in the receiver console", "attested_by": "ops-oncall"}
EOF'
run "dpone delivery reconcile --registry examples --operation-id $child --evidence evidence.json"
run "dpone delivery reconcile --registry examples --operation-id $child --evidence evidence.json --actor ops-oncall --apply"
run "dpone delivery resume --registry examples --operation-id $parent --apply --actor ops-oncall"
run 'curl -s -H "Authorization: Bearer $TOKEN" $RECEIVER/mock/_ledger | jq "{mutations_total, rows_total, duplicate_mutations}"'
