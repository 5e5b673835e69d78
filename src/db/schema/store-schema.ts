import { pgSchema } from 'drizzle-orm/pg-core';

/**
 * Every object lives in one schema. Migrations are generated with the default name and the
 * migrator writes the configured DATABASE_SCHEMA in its place (see migrator.ts); runtime SQL
 * names tables through storeNames(), never through these objects.
 */
export const DEFAULT_SCHEMA = 'intake_sync';
export const intakeSync = pgSchema(DEFAULT_SCHEMA);
