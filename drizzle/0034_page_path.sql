-- Issue 37: the page path writes only what a query needs (docs/performance.md, "The page ledger").
-- The equality lookups on external_id alone (triage's search, _quarantine_filter) use the text_pattern_ops
-- index of 0021, which serves = as well as prefixes: this one cost every insert and every non-HOT
-- status update of prescriptions an index entry and no query needed it. Dropping an index takes an
-- ACCESS EXCLUSIVE lock on prescriptions for the catalog change only (milliseconds; measured in
-- docs/upgrading.md); events is not touched.
DROP INDEX IF EXISTS "intake_sync"."prescriptions_external_id_idx";
