-- isValidNpi(): ten ASCII digits whose Luhn check over 80840 + the digits holds.
CREATE OR REPLACE FUNCTION "intake_sync"."_is_valid_npi"(value text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  SELECT CASE WHEN value OPERATOR(pg_catalog.~) '^[0-9]{10}$' THEN (
    SELECT pg_catalog.sum(CASE WHEN i % 2 = 1 THEN (2 * digit) % 10 + (2 * digit) / 10 ELSE digit END) % 10 = 0
    FROM (SELECT i, pg_catalog.substr(pg_catalog.reverse('80840' || value), i + 1, 1)::integer AS digit
          FROM pg_catalog.generate_series(0, 14) AS i) AS digits)
  ELSE false END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_is_valid_npi"(text) FROM PUBLIC;
