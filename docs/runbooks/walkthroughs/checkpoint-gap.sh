#!/usr/bin/env bash
# Runbook walkthrough: the checkpoint frontier stops at a child whose effect is unknown.
source "$(dirname "$0")/_prelude.sh"

say 'the receiver answers the first batch normally and refuses the second with a 503'
run 'curl -s -X POST -H "Authorization: Bearer $TOKEN" $RECEIVER/mock/_faults -d '"'"'[{"match": {"method": "POST", "path_prefix": "/mock/v1/batches/"}, "fault": "slow", "delay_ms": 0}, {"match": {"method": "POST", "path_prefix": "/mock/v1/batches/"}, "fault": "refuse_before_read", "status": 503}]'"'"'; echo'
run 'dpone deliver examples/workloads/measurements_sync.yaml --registry examples --interval-start 2026-08-01 --interval-end 2026-08-22'
parent=$(latest_delivery)
child="${parent}_0002"
run "dpone delivery inspect --registry examples --operation-id $parent"
say 'the receiver console (here its ledger) holds nothing under child 2'"'"'s delivery key'
run 'curl -s -H "Authorization: Bearer $TOKEN" $RECEIVER/mock/_ledger | jq "{mutations_total, rows_by_key}"'
run 'cat > evidence.json <<EOF
{"schema": "dpone.operator_evidence.v1", "effect": "not_applied", "accepted_rows": 0, "rejected_rows": 0,
 "receiver_reference": "no batch under this delivery key in the receiver console", "attested_by": "ops-oncall"}
EOF'
run "dpone delivery reconcile --registry examples --operation-id $child --evidence evidence.json --actor ops-oncall --apply"
run "dpone delivery resume --registry examples --operation-id $parent --apply --actor ops-oncall"
run "dpone delivery inspect --registry examples --operation-id $parent"
run 'curl -s -H "Authorization: Bearer $TOKEN" $RECEIVER/mock/_ledger | jq "{mutations_total, rows_total, duplicate_mutations}"'
