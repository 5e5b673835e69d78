-- Raises _api_input_problem's finding (22001, the field as the error's column), if any.
CREATE OR REPLACE FUNCTION "intake_sync"."_raise_input_problem"(problem text[]) RETURNS void
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF _raise_input_problem.problem IS NOT NULL THEN
    RAISE EXCEPTION '%: %', problem[1], problem[2] USING ERRCODE = problem[3], COLUMN = problem[1];
  END IF;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_raise_input_problem"(text[]) FROM PUBLIC;
