#!/usr/bin/env bash
# Runs N instances of the built service on PostgreSQL + Redis behind one HAProxy address, to try
# the scale-out setup on one machine. Ctrl-C (or SIGTERM) stops every process it started.
#
#   npm run cluster            # 3 instances behind http://127.0.0.1:8080
#   npm run cluster -- 2       # 2 instances
#   PORT=9000 DATABASE_URL=postgres://... REDIS_URL=redis://... npm run cluster -- 4
set -euo pipefail
cd "$(dirname "$0")/.."

count=${1:-3}
if ! [[ "$count" =~ ^[1-9][0-9]?$ ]]; then
  echo "usage: npm run cluster -- [N]   (N instances, 1 to 99; default 3)" >&2
  exit 2
fi
port=${PORT:-8080}
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379}
export PUBLIC_BASE_URL=${PUBLIC_BASE_URL:-http://127.0.0.1:$port}
# The instances see HAProxy's address; the client's comes from the X-Forwarded-For it adds.
export TRUST_PROXY=127.0.0.1

if ! command -v haproxy >/dev/null 2>&1; then
  echo "cluster: installing haproxy (Debian package)" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd=sudo
  $sudo_cmd apt-get install -y -qq haproxy >/dev/null
fi
[ -f dist/main.js ] || npm run --silent build

work=$(mktemp -d)
pids=()
stop() {
  trap - INT TERM EXIT
  echo "cluster: stopping ${#pids[@]} processes" >&2
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap 'stop; exit 0' INT TERM
trap stop EXIT

# Migrations once, up front (instances starting together would also apply them once, under a lock).
node dist/cli/main.js migrate

{
  echo "global"
  echo "  maxconn 4096"
  echo "defaults"
  echo "  mode http"
  echo "  timeout connect 3s"
  echo "  timeout client 35s"
  echo "  timeout server 35s"
  echo "  option forwardfor"
  echo "frontend pets"
  echo "  bind 127.0.0.1:$port"
  echo "  default_backend instances"
  echo "backend instances"
  echo "  balance roundrobin"
  echo "  option httpchk GET /readyz"
  for i in $(seq 1 "$count"); do
    echo "  server instance$i 127.0.0.1:$((port + i)) check inter 1s rise 1 fall 2"
  done
} >"$work/haproxy.cfg"

for i in $(seq 1 "$count"); do
  PORT=$((port + i)) node dist/main.js >"$work/instance$i.log" 2>&1 &
  pids+=($!)
done
for i in $(seq 1 "$count"); do
  for _ in $(seq 1 150); do
    grep -q listening "$work/instance$i.log" && break
    sleep 0.1
  done
done
haproxy -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 &
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
echo "cluster: $count instances (ports $((port + 1))-$((port + count))) behind $PUBLIC_BASE_URL"
echo "cluster: PostgreSQL $DATABASE_URL, Redis $REDIS_URL; logs in $work"
echo "cluster: a pro-plan key for trying it: $key"
echo "cluster: Ctrl-C stops everything"
wait -n "${pids[@]}" || true
echo "cluster: a process exited on its own; stopping the rest (logs were in $work)" >&2
exit 1
