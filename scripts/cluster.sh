#!/usr/bin/env bash
# Runs N instances of the built service on PostgreSQL + Redis behind one HAProxy address, to try
# the scale-out setup on one machine. An instance that exits is started again (after a short,
# growing pause); Ctrl-C (or SIGTERM) stops every process it started.
#
#   npm run cluster            # 3 instances behind http://127.0.0.1:8080
#   npm run cluster -- 2       # 2 instances
#   npm run cluster -- --install   # may install HAProxy with apt-get (else it asks, or refuses)
#   PORT=9000 DATABASE_URL=postgres://... REDIS_URL=redis://... npm run cluster -- 4
#
# HAProxy listens on PORT (default 8080); instance i serves the pet API on PORT + i and its
# operations listener (OPS_PORT: /readyz, which HAProxy checks, /healthz, /metrics) on
# PORT + N + i. Logs go to a folder named at start and at exit, and kept: $CLUSTER_LOGS/<UTC time>/
# (default ./cluster-logs/...), with instance-N.log, haproxy.log and the haproxy.cfg used.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: npm run cluster -- [N] [--install]   (N instances, 1 to 99; default 3)" >&2
  echo "  --install   install HAProxy with apt-get if it is missing, without asking" >&2
}
count=3
install=no
for arg in "$@"; do
  case "$arg" in
    --install) install=yes ;;
    -h | --help) usage && exit 0 ;;
    *)
      if ! [[ "$arg" =~ ^[1-9][0-9]?$ ]]; then usage && exit 2; fi
      count=$arg
      ;;
  esac
done

# Nothing is installed without the operator's word: a yes at the prompt, or --install.
if ! command -v haproxy >/dev/null 2>&1; then
  if [ "$install" = no ] && [ -t 0 ]; then
    read -r -p "cluster: HAProxy is not installed. Install the Debian package haproxy with apt-get now? [y/N] " answer || answer=""
    case "$answer" in [yY] | [yY][eE][sS]) install=yes ;; esac
  fi
  if [ "$install" = no ]; then
    echo "cluster: HAProxy is not installed. Install it (Debian/Ubuntu: sudo apt-get install haproxy)," >&2
    echo "cluster: or run npm run cluster -- --install to let this script run apt-get install haproxy." >&2
    exit 1
  fi
  echo "cluster: installing haproxy with apt-get install haproxy" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd=sudo
  $sudo_cmd apt-get install -y -qq haproxy >/dev/null
  if ! command -v haproxy >/dev/null 2>&1; then
    echo "cluster: apt-get install haproxy finished, but haproxy is still not on PATH" >&2
    exit 1
  fi
fi

port=${PORT:-8080}
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379}
export PUBLIC_BASE_URL=${PUBLIC_BASE_URL:-http://127.0.0.1:$port}
# The instances see HAProxy's address; the client's comes from the X-Forwarded-For it adds.
export TRUST_PROXY=127.0.0.1
[ -f dist/main.js ] || npm run --silent build

logs="${CLUSTER_LOGS:-./cluster-logs}/$(date -u +%Y%m%dT%H%M%SZ)"
[ -e "$logs" ] && logs="$logs-$$"
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
echo "cluster: logs in $logs" >&2

pids=()
stop() {
  trap - INT TERM EXIT
  echo "cluster: stopping ${#pids[@]} processes" >&2
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  echo "cluster: logs kept in $logs" >&2
}
trap 'stop; exit 0' INT TERM
trap stop EXIT

# Runs instance $1 on port $2 (operations listener on $3) and starts it again whenever it exits:
# after 1 s, doubling up to 16 s while it keeps exiting within a minute of its start. SIGTERM
# stops the instance and the loop.
supervise() {
  local i=$1 instance_port=$2 ops_port=$3 delay=1 child="" started status
  trap '[ -z "$child" ] || kill -TERM "$child" 2>/dev/null; [ -z "$child" ] || wait "$child"; exit 0' TERM
  while :; do
    started=$SECONDS
    PORT=$instance_port OPS_PORT=$ops_port node dist/main.js >>"$logs/instance-$i.log" 2>&1 &
    child=$!
    echo "cluster: instance $i started (pid $child, port $instance_port, ops port $ops_port)" >&2
    status=0
    wait "$child" || status=$?
    child=""
    if [ $((SECONDS - started)) -ge 60 ]; then delay=1; fi
    echo "cluster: instance $i (port $instance_port) exited with status $status; restarting in $delay s" >&2
    sleep "$delay" &
    wait $! || true
    delay=$((delay < 16 ? delay * 2 : 16))
  done
}

# Migrations once, up front (instances starting together would also apply them once, under a lock).
node dist/cli/main.js migrate

# The project's HAProxy setup (health checks on /readyz matched to the instances' drain on SIGTERM,
# the service's Error body for what HAProxy answers itself).
instances=()
for i in $(seq 1 "$count"); do instances+=("$((port + i)):$((port + count + i))"); done
scripts/haproxy-config.sh "$port" "${instances[@]}" >"$logs/haproxy.cfg"

for i in $(seq 1 "$count"); do
  supervise "$i" $((port + i)) $((port + count + i)) &
  pids+=($!)
done
for i in $(seq 1 "$count"); do
  for _ in $(seq 1 150); do
    grep -q listening "$logs/instance-$i.log" 2>/dev/null && break
    sleep 0.1
  done
done
haproxy -f "$logs/haproxy.cfg" -db >"$logs/haproxy.log" 2>&1 &
pids+=($!)
# Ready once HAProxy has found the instances healthy and answers through them.
node -e '
  const url = process.argv[1];
  const deadline = Date.now() + 20000;
  (async () => {
    while (Date.now() < deadline) {
      const ok = await fetch(url).then((r) => r.ok, () => false);
      if (ok) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    console.error("cluster: HAProxy did not find a healthy instance in 20 s");
    process.exit(1);
  })();
' "http://127.0.0.1:$port/readyz"
key=$(node dist/cli/main.js keys create --plan pro --name "cluster $(date -u +%FT%TZ)" 2>/dev/null | tail -n 1)
echo "cluster: $count instances (ports $((port + 1))-$((port + count)), ops ports $((port + count + 1))-$((port + 2 * count))) behind $PUBLIC_BASE_URL"
echo "cluster: PostgreSQL $DATABASE_URL, Redis $REDIS_URL; logs in $logs"
echo "cluster: a pro-plan key for trying it: $key"
echo "cluster: Ctrl-C stops everything"
# The supervisors run until stopped, so only HAProxy (or a supervisor that failed) ends this.
wait -n "${pids[@]}" || true
echo "cluster: a process exited on its own; stopping the rest" >&2
exit 1
