CREATE OR REPLACE FUNCTION "intake_sync"."_api_input_problem"(value jsonb, root text) RETURNS text[]
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  caps jsonb := "intake_sync"."_api_input_caps"();
  bytes integer;
  hit record;
BEGIN
  IF _api_input_problem.value IS NULL THEN
    RETURN NULL;
  END IF;
  bytes := octet_length(_api_input_problem.value::text);
  IF bytes > (caps ->> 'body_bytes')::integer THEN
    RETURN ARRAY[_api_input_problem.root, format('must be at most %s bytes of JSON (got %s)', caps ->> 'body_bytes', bytes), '22001'];
  END IF;
  WITH RECURSIVE walk(path, key, item) AS (
    SELECT _api_input_problem.root, _api_input_problem.root, _api_input_problem.value
    UNION ALL
    SELECT w.path || e.step, e.key, e.item
    FROM walk w
    CROSS JOIN LATERAL (
      SELECT '.' || o.key AS step, o.key, o.value AS item
      FROM jsonb_each(CASE WHEN jsonb_typeof(w.item) = 'object' THEN w.item END) AS o
      UNION ALL
      SELECT '[' || (a.ord - 1) || ']', w.key, a.value
      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(w.item) = 'array' THEN w.item END) WITH ORDINALITY AS a(value, ord)
    ) e
  ),
  measured AS (
    SELECT path, length(item #>> '{}') AS chars,
      CASE WHEN caps -> 'free_text_keys' ? key THEN (caps ->> 'free_text')::integer ELSE (caps ->> 'other_text')::integer END AS cap
    FROM walk WHERE jsonb_typeof(item) = 'string'
  )
  SELECT path, chars, cap INTO hit FROM measured WHERE chars > cap ORDER BY path COLLATE "C" LIMIT 1;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  RETURN ARRAY[hit.path, format('must be at most %s characters (got %s)', hit.cap, hit.chars), '22001'];
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_api_input_problem"(jsonb, text) FROM PUBLIC;
