#!/usr/bin/env bash
# A PostgreSQL cluster of a benchmark's own, from Debian's postgresql binaries, with the server's
# durable defaults (fsync and synchronous commit on, like the SQLite store's fsync per commit).
#   throwaway-postgres.sh start FOLDER PORT   # prints the URL of a new database "bench"
#   throwaway-postgres.sh stop FOLDER
# initdb refuses to run as root: as root, the cluster runs as the postgres user.
set -euo pipefail
command=$1 folder=$2
bin=${STATELOOP_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
case $command in
start)
    port=$3
    mkdir -p "$folder"
    if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$folder"; fi
    as_postgres "$bin/initdb" -D "$folder/data" --auth=trust -U bench -E UTF8 --locale=C.UTF-8 >"$folder/initdb.log" 2>&1
    as_postgres "$bin/pg_ctl" -D "$folder/data" -l "$folder/log" -w \
        -o "-p $port -k $folder -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null
    as_postgres "$bin/createdb" -h 127.0.0.1 -p "$port" -U bench bench
    echo "postgres://bench@127.0.0.1:$port/bench"
    ;;
stop)
    as_postgres "$bin/pg_ctl" -D "$folder/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$folder"
    ;;
esac
