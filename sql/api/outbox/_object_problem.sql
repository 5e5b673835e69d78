-- The first problem of one object's fields (then its own refinements, which zod runs only on an
-- object whose fields passed); NULL when it is valid.
CREATE OR REPLACE FUNCTION "intake_sync"."_object_problem"(obj jsonb, path text, object_name text)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  field record;
  problem text[];
  has_code boolean;
  has_description boolean;
BEGIN
  FOR field IN SELECT f.key, f.rule FROM "intake_sync"."_prescription_fields"(object_name) AS f ORDER BY f.ord LOOP
    problem := "intake_sync"."_value_problem"(obj ? field.key, obj -> field.key, path || '.' || field.key, field.rule);
    IF problem IS NOT NULL THEN
      RETURN problem;
    END IF;
  END LOOP;
  IF object_name = 'diagnosis' THEN
    -- a secondary code without its description (or the reverse); '' counts as absent, as in JavaScript
    has_code := coalesce(obj ->> 'secondary_icd10_code', '') <> '';
    has_description := coalesce(obj ->> 'secondary_icd10_description', '') <> '';
    IF has_code <> has_description THEN
      RETURN ARRAY[path || CASE WHEN has_code THEN '.secondary_icd10_description' ELSE '.secondary_icd10_code' END,
                   'secondary code and description must be given together', '22023'];
    END IF;
  END IF;
  RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_object_problem"(jsonb, text, text) FROM PUBLIC;
