# Sourced by every runbook walkthrough (scripts/generate_runbooks.py runs each one in a fresh,
# empty working directory). Not shown in the runbooks: it copies the example registry, points
# its binding at a mock receiver started on a free loopback port, and defines `run`, which
# prints a command as typed and then its real output (stderr included) and exit code.
set -uo pipefail
export NO_COLOR=1 PYTHONUNBUFFERED=1 COLUMNS=100
export DPONE_CONN_MOCK_MEASUREMENTS_TOKEN="runbook-$$-token"
export TOKEN="$DPONE_CONN_MOCK_MEASUREMENTS_TOKEN"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export RECEIVER="http://127.0.0.1:$port"
cp -r "$DPONE_REPO/examples" examples
sed -i "s#http://127.0.0.1:8765#$RECEIVER#" examples/bindings/mock_measurements.yaml
dpone receiver serve --port "$port" --processing-seconds "${RECEIVER_PROCESSING_SECONDS:-0.2}" \
  >receiver.log 2>&1 &
receiver_pid=$!
trap 'kill "$receiver_pid" 2>/dev/null; wait "$receiver_pid" 2>/dev/null' EXIT
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done

# run 'COMMAND': print "$ COMMAND" as typed, run it, print its output and any non-zero exit.
run() {
  printf '$ %s\n' "$1"
  eval "$1" 2>&1
  local rc=$?
  if [ "$rc" -ne 0 ]; then printf '[exit %d]\n' "$rc"; fi
  return 0
}

# quietly 'COMMAND': run it, show nothing (setup the reader does not need to see).
quietly() { eval "$1" >/dev/null 2>&1; }

# say 'TEXT': a comment line in the transcript.
say() { printf '# %s\n' "$1"; }

# latest_delivery: the id of the newest delivery in the journal (first in `dpone delivery list`).
latest_delivery() { dpone delivery list --registry examples --format json | jq -r '.deliveries[0].parent_id'; }
