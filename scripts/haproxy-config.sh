#!/usr/bin/env bash
# Prints the HAProxy configuration the project runs its instances behind: scripts/cluster.sh and
# test/process/rolling-restart.test.ts both take it from here.
#
#   scripts/haproxy-config.sh <listen-port> <instance-port>...
#
# HAProxy asks each instance's /readyz every HAPROXY_INTER (default 1s) and takes it out after
# HAPROXY_FALL failures (default 2); HAPROXY_RISE good answers (default 2) put it back. An instance
# that gets SIGTERM answers /readyz 503 at once and keeps serving for DRAIN_SECONDS (default 5), so
# it is out within about inter x fall (2 s) plus one check, inside the drain. Keep
# inter x (fall + 1) below DRAIN_SECONDS when changing either.
set -euo pipefail
if [ "$#" -lt 2 ]; then
  echo "usage: scripts/haproxy-config.sh <listen-port> <instance-port>..." >&2
  exit 2
fi
listen=$1
shift
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
echo "frontend pets"
echo "  bind 127.0.0.1:$listen"
echo "  default_backend instances"
echo "backend instances"
echo "  balance roundrobin"
echo "  option httpchk GET /readyz"
echo "  default-server inter ${HAPROXY_INTER:-1s} fall ${HAPROXY_FALL:-2} rise ${HAPROXY_RISE:-2}"
i=0
for port in "$@"; do
  i=$((i + 1))
  echo "  server instance$i 127.0.0.1:$port check"
done
