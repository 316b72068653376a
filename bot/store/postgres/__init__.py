"""The storage contract over PostgreSQL (`CODECITE_DATABASE_URL` or `DATABASE_URL`).

`PostgresStores` (`bot.store.postgres.stores`) is the StoreSet; `migrations` runs the
versioned schema (`codecite migrate`); `connection` holds the pool, the translation of
driver errors into StoreError and the redaction of the URL. Nothing here imports
psycopg until a database is used.
"""
