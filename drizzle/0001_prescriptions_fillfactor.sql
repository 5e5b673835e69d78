-- Status updates touch no indexed column, so with room left on each heap page they are HOT
-- updates (no index writes). Registration fills pages to 100% otherwise, which turns every
-- status change into a new tuple plus one entry in each of the table's indexes.
ALTER TABLE "prescriptions" SET (fillfactor = 70);
