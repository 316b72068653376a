#!/bin/sh
# The first start makes the cluster (the user with its password, the database); every start
# then runs the command, PostgreSQL in the foreground. UTF8, as the registry image makes it: a
# SQL_ASCII database (initdb's default where no locale is set) hands psycopg bytes for text.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
    user=${POSTGRES_USER:-postgres}
    secret=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" >"$secret"
    initdb --username="$user" --pwfile="$secret" --auth-local=trust --auth-host=scram-sha-256 \
        --encoding=UTF8 --locale=C.UTF-8 \
        >/dev/null
    rm -f "$secret"
    pg_ctl --wait --options="-c listen_addresses=''" start >/dev/null
    if [ "${POSTGRES_DB:-$user}" != postgres ]; then
        createdb --username="$user" "${POSTGRES_DB:-$user}"
    fi
    pg_ctl --wait --mode=fast stop >/dev/null
fi
exec "$@"
