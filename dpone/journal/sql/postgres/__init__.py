"""PostgreSQL journal SQL: numbered migrations (NNNN_name.sql) and named queries (queries.sql)."""
