#!/bin/sh
# Creates the roles and database when absent and applies migrations (idempotent): the one-shot
# `migrate` service of docker-compose.yml runs this before any other service starts.
set -eu
exec node scripts/migrate.ts
