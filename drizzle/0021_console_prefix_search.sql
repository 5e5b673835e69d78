-- The console's prescription search matches the start of an external_id (LIKE 'prefix%'). Outside the
-- C collation (the server's is C.UTF-8, production's may be any) a plain btree cannot serve a LIKE
-- prefix, so without this the search read every prescription (test/console/console-query-plans.test.ts).
-- text_pattern_ops compares bytewise, which a prefix match needs; the plain index stays for ordering.
CREATE INDEX "prescriptions_external_id_pattern_idx" ON "intake_sync"."prescriptions" USING btree ("external_id" text_pattern_ops);
