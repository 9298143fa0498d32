#!/usr/bin/env bash
# Runbook walkthrough: a revoked operation profile, then a deprecated one.
source "$(dirname "$0")/_prelude.sh"

run 'dpone deliver examples/workloads/measurements_async.yaml --registry examples --interval-start 2026-08-01 --interval-end 2026-08-07'
parent=$(latest_delivery)
say 'the vendor reports a flaw in the dataset-jobs protocol: deny every new submit that uses it'
run 'dpone admin revoke --registry examples --profile mock.dataset-jobs@1 --reason "vendor advisory VA-2026-17: duplicate jobs on retry" --actor sec-oncall'
say 'the accepted job is still polled and verified; the next child is not submitted'
run "dpone delivery resume --registry examples --operation-id $parent --apply --wait"
run 'dpone admin revocations --registry examples'
say 'the vendor fix is verified: lift the revocation and continue'
run 'dpone admin unrevoke --registry examples --profile mock.dataset-jobs@1 --reason "VA-2026-17 fixed in receiver 4.2, verified by the security owner" --actor security-owner'
run "dpone delivery resume --registry examples --operation-id $parent --apply --wait"
run 'curl -s -H "Authorization: Bearer $TOKEN" $RECEIVER/mock/_ledger | jq "{mutations_total, rows_total, duplicate_mutations}"'
say 'later the platform deprecates the profile: it compiles no new plan'
quietly 'sed -i "s/^version: 1$/version: 1\nlifecycle: deprecated/" examples/profiles/mock.dataset-jobs@1.yaml'
run 'dpone check examples/workloads/measurements_async.yaml --registry examples'
