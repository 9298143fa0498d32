"""Journal SQL: schemas, numbered migrations and named queries, per database."""
