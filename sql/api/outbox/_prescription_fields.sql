-- The request schema as data: per object, its fields in zod's key order with one rule each.
-- Rule suffixes: '?' optional (absent is fine, null is not), '??' nullish (absent or null).
-- 'obj:NAME' / 'arr:NAME' recurse into another object's fields.
CREATE OR REPLACE FUNCTION "intake_sync"."_prescription_fields"(object_name text)
RETURNS TABLE (ord int, key text, rule text)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT f.ord, f.key, f.rule FROM (VALUES
    ('prescription', 1, 'external_id', 'nonempty'),
    ('prescription', 2, 'written_date', 'date'),
    ('prescription', 3, 'number_of_refills', 'int>=0'),
    ('prescription', 4, 'substitutions', 'int0..9'),
    ('prescription', 5, 'sig_text', 'string?'),
    ('prescription', 6, 'note', 'string?'),
    ('prescription', 7, 'originating_entity', 'string?'),
    ('prescription', 8, 'patient', 'obj:patient'),
    ('prescription', 9, 'medication', 'obj:medication'),
    ('prescription', 10, 'prescriber', 'obj:prescriber'),
    ('prescription', 11, 'pharmacy', 'obj:pharmacy'),
    ('prescription', 12, 'allergies', 'arr:allergy??'),
    ('patient', 1, 'first_name', 'nonempty'),
    ('patient', 2, 'middle_name', 'string??'),
    ('patient', 3, 'last_name', 'nonempty'),
    ('patient', 4, 'dob', 'date'),
    ('patient', 5, 'gender', 'gender'),
    ('patient', 6, 'primary_phone', 'phone'),
    ('patient', 7, 'email', 'email??'),
    ('patient', 8, 'address', 'obj:address'),
    ('address', 1, 'address1', 'nonempty'),
    ('address', 2, 'address2', 'string??'),
    ('address', 3, 'city', 'nonempty'),
    ('address', 4, 'state', 'state'),
    ('address', 5, 'zip', 'zip'),
    ('medication', 1, 'name', 'nonempty'),
    ('medication', 2, 'ndc', 'ndc'),
    ('medication', 3, 'quantity', 'nonempty'),
    ('medication', 4, 'quantity_unit_code', 'nonempty'),
    ('medication', 5, 'days_supply', 'int>0??'),
    ('medication', 6, 'diagnosis', 'obj:diagnosis?'),
    ('diagnosis', 1, 'primary_icd10_code', 'nonempty'),
    ('diagnosis', 2, 'primary_icd10_description', 'nonempty'),
    ('diagnosis', 3, 'secondary_icd10_code', 'string??'),
    ('diagnosis', 4, 'secondary_icd10_description', 'string??'),
    ('prescriber', 1, 'suffix', 'string??'),
    ('prescriber', 2, 'npi', 'npi'),
    ('prescriber', 3, 'primary_phone', 'phone'),
    ('prescriber', 4, 'fax', 'phone??'),
    ('prescriber', 5, 'first_name', 'string?'),
    ('prescriber', 6, 'middle_name', 'string??'),
    ('prescriber', 7, 'last_name', 'string?'),
    ('prescriber', 8, 'address', 'obj:address?'),
    ('pharmacy', 1, 'npi', 'pharmacy_npi'),
    ('pharmacy', 2, 'ncpdpid', 'pharmacy_ncpdpid'),
    ('pharmacy', 3, 'primary_phone', 'phone'),
    ('pharmacy', 4, 'fax', 'phone??'),
    ('pharmacy', 5, 'name', 'string?'),
    ('pharmacy', 6, 'address', 'obj:address?'),
    ('allergy', 1, 'source_of_information', 'allergy_source'),
    ('allergy', 2, 'effective_date', 'string??'),
    ('allergy', 3, 'adverse_event', 'obj:adverse_event'),
    ('allergy', 4, 'drug_product', 'obj:coded_text'),
    ('allergy', 5, 'severity', 'obj:coded_text?'),
    ('adverse_event', 1, 'text', 'nonempty'),
    ('adverse_event', 2, 'code', 'string??'),
    ('coded_text', 1, 'code', 'string??'),
    ('coded_text', 2, 'text', 'string?')
  ) AS f(object_name, ord, key, rule)
  WHERE f.object_name = _prescription_fields.object_name
  ORDER BY f.ord
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_prescription_fields"(text) FROM PUBLIC;
