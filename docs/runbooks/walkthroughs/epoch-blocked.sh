#!/usr/bin/env bash
# Runbook walkthrough: the environment mutation gate is BLOCKED after a journal restore.
source "$(dirname "$0")/_prelude.sh"

run 'dpone deliver examples/workloads/measurements_sync.yaml --registry examples --interval-start 2026-08-01 --interval-end 2026-08-08'
say 'the journal was restored from a backup; zero-RPO continuity is not proven: block new mutations'
run 'dpone admin gate block --journal examples/.dpone/journal.sqlite3 --reason "journal restored from the 02:00 backup; zero-RPO not proven" --actor ops-oncall'
run 'dpone deliver examples/workloads/measurements_sync.yaml --registry examples --interval-start 2026-08-08 --interval-end 2026-08-15'
parent=$(latest_delivery)
say 'read-only commands keep working: list, inspect'
run 'dpone delivery list --registry examples'
run "dpone delivery inspect --registry examples --operation-id $parent"
run 'dpone admin gate show --journal examples/.dpone/journal.sqlite3'
say 'the reconciliation campaign is approved: reopen mutations at the next journal epoch'
run 'dpone admin gate open --journal examples/.dpone/journal.sqlite3 --epoch 1 --reason "restore reconciled: 2 deliveries checked, approved by the security owner" --actor security-owner'
run "dpone delivery resume --registry examples --operation-id $parent --apply"
run 'curl -s -H "Authorization: Bearer $TOKEN" $RECEIVER/mock/_ledger | jq "{mutations_total, rows_total, duplicate_mutations}"'
