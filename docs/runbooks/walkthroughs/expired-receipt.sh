#!/usr/bin/env bash
# Runbook walkthrough: an async job's receipt expired before its end was observed.
source "$(dirname "$0")/_prelude.sh"

say 'the receiver will forget the next job'"'"'s receipt: its status answers 410 from now on'
run 'curl -s -X POST -H "Authorization: Bearer $TOKEN" $RECEIVER/mock/_faults -d '"'"'[{"match": {"method": "GET", "path_prefix": "/mock/v1/dataset-jobs/"}, "fault": "expire_receipt"}]'"'"'; echo'
run 'dpone deliver examples/workloads/measurements_async.yaml --registry examples --interval-start 2026-08-01 --interval-end 2026-08-07 --wait'
parent=$(latest_delivery)
child="${parent}_0001"
run "dpone delivery inspect --registry examples --operation-id $child"
say 'the profile certifies a read-only lookup by delivery key: reconcile needs no other proof'
run "dpone delivery reconcile --registry examples --operation-id $child"
run "dpone delivery reconcile --registry examples --operation-id $child --actor ops-oncall --apply"
run "dpone delivery resume --registry examples --operation-id $parent --apply --wait --actor ops-oncall"
run "dpone delivery inspect --registry examples --operation-id $parent"
run 'curl -s -H "Authorization: Bearer $TOKEN" $RECEIVER/mock/_ledger | jq "{mutations_total, rows_total, duplicate_mutations}"'
