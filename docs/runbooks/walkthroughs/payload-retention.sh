#!/usr/bin/env bash
# Runbook walkthrough: payload retention (`dpone admin prune`) after retention.payload_days.
source "$(dirname "$0")/_prelude.sh"

run 'dpone deliver examples/workloads/measurements_sync.yaml --registry examples --interval-start 2026-08-01 --interval-end 2026-08-08'
old=$(latest_delivery)
run 'dpone deliver examples/workloads/measurements_sync.yaml --registry examples --interval-start 2026-08-08 --interval-end 2026-08-15'
say 'both deliveries were admitted today: within payload_days (30), nothing goes'
run 'dpone admin prune --registry examples'
say 'the walkthrough moves the first admission 31 days back on the journal clock'
quietly "python3 -c \"import sqlite3; c = sqlite3.connect('.dpone/journal.sqlite3'); c.execute(\\\"UPDATE rest_delivery_parent SET admitted_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-31 days') WHERE parent_id = '$old'\\\"); c.commit()\""
run 'dpone admin prune --registry examples'
run 'dpone admin prune --registry examples --apply --actor retention-bot'
run "dpone delivery inspect --registry examples --operation-id $old"
run "dpone delivery resume --registry examples --operation-id $old"
