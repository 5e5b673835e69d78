-- filled in by the 0004_api_outbox work; a no-op until then
SELECT 1;
