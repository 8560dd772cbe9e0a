#!/usr/bin/env bash
# Prints the HAProxy configuration the project runs its instances behind: scripts/cluster.sh and
# test/process/rolling-restart.test.ts both take it from here. It does what the shipped one
# (deploy/haproxy/haproxy.cfg) does, with the instances listed by port: the same errorfiles, read
# where they are shipped, and the readiness checks on each instance's operations listener.
#
#   scripts/haproxy-config.sh <listen-port> <instance-port>:<ops-port>...
#
# <ops-port> is the instance's OPS_PORT: HAProxy asks its /readyz there, so that no load on the
# pet API's port can refuse the checks. It asks every HAPROXY_INTER (default 1s) and takes an
# instance out after HAPROXY_FALL failures (default 2); HAPROXY_RISE good answers (default 2) put
# it back. An instance that gets SIGTERM answers /readyz 503 at once (on both listeners) and keeps
# serving for DRAIN_SECONDS (default 5), so it is out within about inter x fall (2 s) plus one
# check, inside the drain. Keep inter x (fall + 1) below DRAIN_SECONDS when changing either.
set -euo pipefail
usage() {
  echo "usage: scripts/haproxy-config.sh <listen-port> <instance-port>:<ops-port>..." >&2
  exit 2
}
[ "$#" -ge 2 ] || usage
listen=$1
shift
for instance in "$@"; do
  [[ "$instance" =~ ^[0-9]+:[0-9]+$ ]] || usage
done
# What HAProxy answers by itself is the service's Error body: the shipped files, not copies.
errors="$(cd "$(dirname "$0")/../deploy/haproxy/errors" && pwd)"
shopt -s nullglob
errorfiles=("$errors"/[0-9][0-9][0-9].http)
if [ "${#errorfiles[@]}" -eq 0 ]; then
  echo "haproxy-config.sh: no errorfiles in $errors" >&2
  exit 1
fi
echo "global"
echo "  maxconn 4096"
echo "defaults"
echo "  mode http"
echo "  timeout connect 3s"
echo "  timeout client 35s"
echo "  timeout server 35s"
echo "  option forwardfor"
# A connection refused (an instance killed or restarting, not yet marked down) is retried on
# another instance: nothing was sent, so any request may go again.
echo "  retries 2"
echo "  option redispatch 1"
for file in "${errorfiles[@]}"; do
  echo "  errorfile $(basename "$file" .http) \"$file\""
done
echo "frontend pets"
echo "  bind 127.0.0.1:$listen"
echo "  default_backend instances"
echo "backend instances"
echo "  balance roundrobin"
echo "  option httpchk GET /readyz"
echo "  default-server inter ${HAPROXY_INTER:-1s} fall ${HAPROXY_FALL:-2} rise ${HAPROXY_RISE:-2}"
i=0
for instance in "$@"; do
  i=$((i + 1))
  echo "  server instance$i 127.0.0.1:${instance%%:*} check port ${instance##*:}"
done
